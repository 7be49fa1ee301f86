import { wrap } from '@mikro-orm/core';
import type { RequestContext } from '../../core/context';
import { groupBy, loader } from '../../core/loaders';
import { Comment } from '../comment/comment.entity';
import { presentComment, type CommentFullView, type CommentView } from '../comment/comment.types';
import { User } from '../user/user.entity';
import { presentAuthor, type AuthorView } from './author.types';
import { Post } from './post.entity';
import { presentPost, type PostFullView, type PostView } from './post.types';

/**
 * The per-request batches behind every embed, shared by the REST presenter below and the GraphQL
 * field resolvers, so both surfaces run the same statements: one for the authors of a page of
 * posts, one for all their comments with the comments' authors (joined).
 */

/** Authors by user id; null for a soft-deleted user (the softDelete filter applies). */
export function authorLoader(ctx: RequestContext) {
  return loader<number, AuthorView | null>(ctx, 'post.author', async (ids) => {
    const users = await ctx.em.find(User, { id: { $in: [...ids] } });
    const byId = new Map(users.map((u) => [u.id, presentAuthor(u)]));
    return ids.map((id) => byId.get(id) ?? null);
  });
}

/**
 * Comments by post id, oldest first. Their authors come in the same statement (joined populate);
 * the softDelete filter sits inside the JOIN, so an author left uninitialized was filtered out.
 * The authors are primed into authorLoader, so Comment.user costs no statement of its own.
 */
export function commentsLoader(ctx: RequestContext) {
  return loader<number, CommentView[]>(ctx, 'post.comments', async (postIds) => {
    const rows = await ctx.em.find(
      Comment,
      { post: { $in: [...postIds] } },
      { populate: ['user'], orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
    );
    const authors = authorLoader(ctx);
    for (const c of rows) {
      const alive = wrap(c.user).isInitialized() && c.user.deletedAt === null;
      authors.prime(c.user.id, alive ? presentAuthor(c.user) : null);
    }
    return groupBy(postIds, rows, (c) => c.post.id).map((list) => list.map(presentComment));
  });
}

/** A user's active posts, newest first (GraphQL User.posts). */
export function postsByUserLoader(ctx: RequestContext) {
  return loader<number, PostView[]>(ctx, 'user.posts', async (userIds) => {
    const rows = await ctx.em.find(Post, { user: { $in: [...userIds] } }, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
    return groupBy(userIds, rows, (p) => p.user.id).map((list) => list.map(presentPost));
  });
}

export async function fullComment(ctx: RequestContext, c: CommentView): Promise<CommentFullView> {
  return { ...c, user: await authorLoader(ctx).load(c.userId) };
}

/** Posts with author, comments (each with its author) and the comment count, for REST. */
export async function fullPosts(ctx: RequestContext, posts: PostView[]): Promise<PostFullView[]> {
  return Promise.all(
    posts.map(async (p) => {
      const [user, comments] = await Promise.all([authorLoader(ctx).load(p.userId), commentsLoader(ctx).load(p.id)]);
      const withAuthors = await Promise.all(comments.map((c) => fullComment(ctx, c)));
      return { ...p, user, comments: withAuthors, commentsCount: comments.length };
    }),
  );
}

export async function fullPost(ctx: RequestContext, post: PostView): Promise<PostFullView> {
  return (await fullPosts(ctx, [post]))[0];
}
