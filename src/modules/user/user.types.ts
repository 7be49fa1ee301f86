import { Field, Int, ObjectType } from 'type-graphql';
import type { Actor, UserView } from '../../core/actor';

export type { Actor, UserView } from '../../core/actor';

/** Moderators and admins may act on others' posts. */
export const canModerate = (actor: Pick<Actor, 'role'>) => actor.role === 'admin' || actor.role === 'moderator';

export function presentUser(u: UserView): UserView {
  return {
    id: u.id,
    name: u.name,
    email: u.email,
    role: u.role,
    emailVerifiedAt: u.emailVerifiedAt,
    createdAt: u.createdAt,
    updatedAt: u.updatedAt,
  };
}

@ObjectType('User', { simpleResolvers: true })
export class UserType implements UserView {
  @Field(() => Int) id!: number;
  @Field(() => String) name!: string;
  @Field(() => String) email!: string;
  @Field(() => String) role!: string;
  @Field(() => Date, { nullable: true }) emailVerifiedAt!: Date | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}
