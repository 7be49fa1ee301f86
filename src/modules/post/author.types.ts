import { Field, Int, ObjectType } from 'type-graphql';
import { shapeOf, type ViewOf } from '../../core/shape';
import { UserSchema } from '../user/user.entity';

/** The `user` embedded in posts and comments: public, so id and name only (never the email). */
export const authorShape = shapeOf(UserSchema, ['id', 'name']);

export type AuthorView = ViewOf<typeof authorShape>;

/** GraphQL's Author: written in type-graphql's idiom; test/shapes.test.ts holds its fields to authorShape. */
@ObjectType('Author', { simpleResolvers: true })
export class AuthorType implements AuthorView {
  @Field(() => Int) id!: number;
  @Field(() => String) name!: string;
}
