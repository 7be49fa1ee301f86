import { raw, type EntityManager, type QueryBuilder } from '@mikro-orm/postgresql';
import type { RequestContext } from '../../core/context';
import { groupBy, loader } from '../../core/loaders';
import { cachedStatement, param, runStatement, statementOf, type Statement } from '../../db/statements';
import { Comment } from '../comment/comment.entity';
import { commentShape, type CommentColumns, type CommentView } from '../comment/comment.types';
import { User } from '../user/user.entity';
import { authorShape, type AuthorView } from './author.types';
import { Post } from './post.entity';
import { presentPost, type PostView } from './post.types';

/**
 * The per-request batches behind every GraphQL embed: one for the authors of a page of
 * posts, one for all their comments with the comments' authors (joined).
 */

/**
 * Embeds already read with their row: a post's or comment's author comes from the row's own
 * author JOIN, a post's comments from a batch read ahead for the whole list (preloadComments).
 * Field resolvers answer these without a promise (graphql-js then completes the field
 * synchronously). Symbol keys: JSON and the REST presenter never see them.
 */
const AUTHOR = Symbol('author');
const COMMENTS = Symbol('comments');
type WithEmbeds = { [AUTHOR]?: AuthorView | null; [COMMENTS]?: CommentView[] };

export function withAuthor<T extends object>(row: T, author: AuthorView | null): T {
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

/**
 * LEFT JOINs the author of `owner`'s row (its user_id) to `qb` as `alias`, from the users the
 * ORM's filters show `em` (softDelete: the active ones): a hidden author joins as nulls instead of
 * hiding the post or comment. The users are a User QueryBuilder with its filters applied by the
 * ORM (public `applyFilters`), joined as a sub-query, so the filters decide here as everywhere;
 * PostgreSQL flattens it into a plain join (the plan of a condition in the ON clause).
 */
export async function leftJoinAuthor(em: EntityManager, qb: { leftJoin(users: QueryBuilder<User, "vu", never, never, never, "id" | "name">, alias: string, cond: object): unknown }, alias: string, owner: string): Promise<void> {
  const users = em.createQueryBuilder(User, 'vu').select(authorShape.select('vu'));
  await users.applyFilters();
  qb.leftJoin(users, alias, { [raw(`${alias}.id = ${owner}.user_id`)]: [] });
}

/** Authors by user id; null for a soft-deleted user (the softDelete filter applies). */
export function authorLoader(ctx: RequestContext) {
  return loader<number, AuthorView | null>(ctx, 'post.author', async (ids) => {
    const qb = ctx.em.createQueryBuilder(User, 'u').select(authorShape.select('u')).where({ id: { $in: [...ids] } });
    await qb.applyFilters();
    const users: AuthorView[] = await qb.execute('all', false);
    const byId = new Map(users.map((u) => [u.id, { id: u.id, name: u.name }]));
    return ids.map((id) => byId.get(id) ?? null);
  });
}

/** A comment row: commentShape's columns and its author's name (null when the author was filtered out). */
type CommentRow = CommentColumns & { author_name: string | null };

/** The statement of the comments of `postIds` (commentsLoader), built on `em` and not run. */
function commentsStatement(em: EntityManager, postIds: readonly number[]): Promise<Statement> {
  // One shape per batch size (db/statements.ts): the post ids are the declared parameters.
  return cachedStatement(em, `comments ${postIds.length}`, postIds, async (em) => {
    const qb = em
      .createQueryBuilder(Comment, 'c')
      .select(commentShape.select('c'))
      .where({ post: { $in: postIds.map((_, i) => param(i)) } } as never)
      .orderBy([{ createdAt: 'asc' }, { id: 'asc' }]);
    await leftJoinAuthor(em, qb, 'u', 'c');
    qb.addSelect(raw('u.name as author_name'));
    return statementOf(qb);
  });
}

/**
 * Comments by post id, oldest first, with their authors in the same statement. Read as plain
 * rows, not entities: building ~100 entities per page was most of the CPU of GET /posts
 * (npm run bench). The author is joined from the users the ORM's filters show this
 * EntityManager (leftJoinAuthor), so a soft-deleted author comes back as null. The authors
 * are primed into authorLoader, so Comment.user costs no statement of its own.
 */
export function commentsLoader(ctx: RequestContext) {
  return loader<number, CommentView[]>(ctx, 'post.comments', async (postIds) => {
    // One shape per batch size (db/statements.ts): the post ids are the declared parameters.
    const em = ctx.reader();
    const statement = await commentsStatement(em, postIds);
    const rows = await runStatement<CommentRow>(em, statement, { stale: ctx.readFrom === 'read' });
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
