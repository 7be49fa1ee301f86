import { Field, Int, ObjectType } from 'type-graphql';
import type { CommentView } from './comment.types';

/** GraphQL's Comment: written in type-graphql's idiom; test/shapes.test.ts holds its fields to commentShape. */
@ObjectType('Comment', { simpleResolvers: true })
export class CommentType implements CommentView {
  @Field(() => Int) id!: number;
  @Field(() => Int) postId!: number;
  @Field(() => Int) userId!: number;
  @Field(() => String) body!: string;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}
