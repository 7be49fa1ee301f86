import { shapeOf, type RowOf, type ViewOf } from '../../core/shape';
import { PostSchema, type Post } from './post.entity';

/**
 * A post as it leaves the service, without its embeds (author, comments, count; post.loaders.ts):
 * the read model's select list, row and view and the REST JSON's own keys (post.repository.ts)
 * all follow from this list and the entity (core/shape.ts). Its GraphQL type is post.graphql.ts's.
 */
export const postShape = shapeOf(PostSchema, ['id', 'user', 'title', 'slug', 'body', 'published', 'publishedAt', 'createdAt', 'updatedAt', 'deletedAt']);

export type PostView = ViewOf<typeof postShape>;
/** A row of postShape's select list (timestamps as text). */
export type PostColumns = RowOf<typeof postShape>;

export const presentPost = (p: Post): PostView => postShape.present(p);
