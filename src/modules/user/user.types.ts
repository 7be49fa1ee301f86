import { Field, Int, ObjectType } from 'type-graphql';
import type { User } from './user.entity';

/** What leaves the service about a user (CONTRACT 4). The entity itself is never serialised. */
export interface UserView {
  id: number;
  name: string;
  email: string;
  role: string;
  emailVerifiedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export function presentUser(u: User): UserView {
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
