import type { RequestContext } from '../../core/context';
import { groupBy, loader } from '../../core/loaders';
import { commentsOfPosts } from '../comment/comment.repository';
import { commentShape, type CommentView } from '../comment/comment.types';
import { authorsById } from '../user/user.repository';
import type { AuthorView } from '../user/user.types';
import { Post } from './post.entity';
import { postById, postSource, type PostProjection } from './post.repository';
import { presentPost, postShape, type PostView } from './post.types';

/**
 * GraphQL's reads of posts as views, and the per-request batches behind every embed: one for the
 * authors of a page of posts, one for all their comments with the comments' authors (joined). The
 * statements are the repositories'; here is what a request keeps of their rows.
 */

/**
 * Posts as plain views, not entities: the rows of the post statement, their authors primed into
 * authorLoader (so `user` costs nothing more). Hydrating entities and a statement per embed were
 * most of the service's CPU on GET /posts (npm run bench).
 */
const postViews: PostProjection<PostView, RequestContext> = {
  name: 'view',
  map(ctx, rows) {
    const authors = authorLoader(ctx);
    const platform = ctx.reader().getPlatform();
    return rows.map((r) => {
      const author = r.author_name === null ? null : { id: r.user_id, name: r.author_name };
      authors.prime(r.user_id, author);
      return withAuthor(postShape.view(r, platform), author);
    });
  },
};

/** Posts as plain views under the ORM's filters (post.repository.ts postSource). */
export const postViewSource = (ctx: RequestContext, filters: Record<string, boolean> = {}) => postSource(ctx, postViews, filters);

/** One post as `post(id)` answers it (the filters of postViewSource), or null when hidden or gone. */
export const findPostView = (ctx: RequestContext, id: number): Promise<PostView | null> => postById(ctx, postViews, id);

/**
 * Embeds already read with their row: a post's or comment's author comes from the row's own
 * author JOIN, a post's comments from a batch read ahead for the whole list (preloadComments).
 * Field resolvers answer these without a promise (graphql-js then completes the field
 * synchronously). Symbol keys: JSON and the REST presenter never see them.
 */
const AUTHOR = Symbol('author');
const COMMENTS = Symbol('comments');
type WithEmbeds = { [AUTHOR]?: AuthorView | null; [COMMENTS]?: CommentView[] };

function withAuthor<T extends object>(row: T, author: AuthorView | null): T {
  (row as WithEmbeds)[AUTHOR] = author;
  return row;
}

/** The author read with this row, or undefined when it was not. */
export function knownAuthor(row: object): AuthorView | null | undefined {
  return (row as WithEmbeds)[AUTHOR];
}

/** The comments read ahead for this post, or undefined when they were not. */
export function knownComments(post: object): CommentView[] | undefined {
  return (post as WithEmbeds)[COMMENTS];
}

/** Reads the comments of every post of a list in one batch (the commentsLoader's) and keeps them on the posts. */
export async function preloadComments(ctx: RequestContext, posts: readonly PostView[]): Promise<void> {
  if (!posts.length) return;
  const lists = await commentsLoader(ctx).loadMany(posts.map((p) => p.id));
  posts.forEach((p, i) => {
    const list = lists[i];
    if (!(list instanceof Error)) (p as WithEmbeds)[COMMENTS] = list;
  });
}

/** Authors by user id; null for a soft-deleted user (the softDelete filter applies). */
export function authorLoader(ctx: RequestContext) {
  return loader<number, AuthorView | null>(ctx, 'post.author', async (ids) => {
    const byId = new Map((await authorsById(ctx.em, ids)).map((u) => [u.id, { id: u.id, name: u.name }]));
    return ids.map((id) => byId.get(id) ?? null);
  });
}

/**
 * Comments by post id, oldest first, with their authors in the same statement
 * (comment.repository.ts commentsOfPosts: a soft-deleted author comes back as null). The authors
 * are primed into authorLoader, so Comment.user costs no statement of its own.
 */
export function commentsLoader(ctx: RequestContext) {
  return loader<number, CommentView[]>(ctx, 'post.comments', async (postIds) => {
    const rows = await commentsOfPosts(ctx.reader(), postIds, ctx.readFrom === 'read');
    const authors = authorLoader(ctx);
    const platform = ctx.reader().getPlatform();
    const views = rows.map((r) => {
      const author = r.author_name === null ? null : { id: r.user_id, name: r.author_name };
      authors.prime(r.user_id, author);
      return withAuthor(commentShape.view(r, platform), author);
    });
    return groupBy(postIds, views, (c) => c.postId);
  });
}

/** A user's active posts, newest first (GraphQL User.posts). */
export function postsByUserLoader(ctx: RequestContext) {
  return loader<number, PostView[]>(ctx, 'user.posts', async (userIds) => {
    const rows = await ctx.em.find(Post, { user: { $in: [...userIds] } }, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
    return groupBy(userIds, rows, (p) => p.user.id).map((list) => list.map(presentPost));
  });
}
