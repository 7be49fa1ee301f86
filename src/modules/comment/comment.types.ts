import { shapeOf, type RowOf, type ViewOf } from '../../core/shape';
import { CommentSchema, type Comment } from './comment.entity';

/**
 * A comment as it leaves the service, without its author (a field resolver on GraphQL, a JOIN in
 * REST's JSON): the batch read's select list, row and view and the REST JSON's own keys
 * (comment.repository.ts) follow from this list and the entity (core/shape.ts).
 */
export const commentShape = shapeOf(CommentSchema, ['id', 'post', 'user', 'body', 'createdAt', 'updatedAt']);

export type CommentView = ViewOf<typeof commentShape>;
/** A row of commentShape's select list (timestamps as text). */
export type CommentColumns = RowOf<typeof commentShape>;

export const presentComment = (c: Comment): CommentView => commentShape.present(c);
