import { Field, Int, ObjectType } from 'type-graphql';
import type { Role } from '../../core/actor';
import type { AuthorView, UserView } from './user.types';

/** GraphQL's User: written in type-graphql's idiom; test/shapes.test.ts holds its fields to userShape. */
@ObjectType('User', { simpleResolvers: true })
export class UserType implements UserView {
  @Field(() => Int) id!: number;
  @Field(() => String) name!: string;
  @Field(() => String) email!: string;
  @Field(() => String) role!: Role;
  @Field(() => Date, { nullable: true }) emailVerifiedAt!: Date | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}

/** GraphQL's Author (a post's or comment's `user`): test/shapes.test.ts holds its fields to authorShape. */
@ObjectType('Author', { simpleResolvers: true })
export class AuthorType implements AuthorView {
  @Field(() => Int) id!: number;
  @Field(() => String) name!: string;
}
