import { Field, Int, ObjectType } from 'type-graphql';
import type { Role } from './user.entity';

/** What leaves the service about a user (never the password). The entity itself is never serialised. */
export interface UserView {
  id: number;
  name: string;
  email: string;
  role: string;
  emailVerifiedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * The caller, as its bearer token's user row showed it at the request's first check
 * (auth.tokens.ts): a value, not a managed entity.
 */
export interface Actor extends UserView {
  role: Role;
  tokenVersion: number;
}

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
