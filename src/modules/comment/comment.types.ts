import { Field, Int, ObjectType } from 'type-graphql';
import { shapeOf, type RowOf, type ViewOf } from '../../core/shape';
import { CommentSchema, type Comment } from './comment.entity';

/**
 * A comment as it leaves the service, without its author (a field resolver on GraphQL, a JOIN in
 * REST's JSON): the batch read's select list, row and view (post.loaders.ts) and the REST JSON's
 * own keys (post.rest.ts) follow from this list and the entity (core/shape.ts).
 */
export const commentShape = shapeOf(CommentSchema, ['id', 'post', 'user', 'body', 'createdAt', 'updatedAt']);

export type CommentView = ViewOf<typeof commentShape>;
/** A row of commentShape's select list (timestamps as text). */
export type CommentColumns = RowOf<typeof commentShape>;

export const presentComment = (c: Comment): CommentView => commentShape.present(c);

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
