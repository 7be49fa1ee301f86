import { raw, type EntityManager } from '@mikro-orm/postgresql';
import { jsonAggSql, jsonArraySql, jsonObjectSql } from '../../core/json-sql';
import type { ListSource } from '../../core/pagination';
import type { JsonText } from '../../http/present';
import { readContextOf } from '../../core/context';
import { entityTag } from '../../core/etag';
import type { Post } from './post.entity';
import { Comment } from '../comment/comment.entity';
import { commentShape } from '../comment/comment.types';
import { runStatement, statementOf, type Statement } from '../../db/statements';
import { leftJoinAuthor } from './post.loaders';
import { postShape } from './post.types';
import { orderSql, postById, postByIdStatement, postSource, type PostProjection, type PostReadContext } from './post.queries';

/**
 * The REST answers of a post and of a comment: snake_case keys, ISO-8601 UTC timestamps, a
 * post with its author, its comments (oldest first, each with its author) and their count.
 * Each is one definition, built by PostgreSQL as JSON text (core/json-sql.ts) and read by every
 * route that returns one: lists, details, and writes, which answer by reading the written row
 * back (in their transaction) through the same builder.
 */

/** An author as REST embeds it: id and name; null when the users' filter hid the user. */
const authorJson = (id: string, name: string) => `case when ${name} is null then null else ${jsonObjectSql('', [['id', 'int', id], ['name', 'string', name]])} end`;

/**
 * The REST post over a row of the post statement: its columns (postShape's keys) on `row`, the
 * author's name (null when the users' filter hid the author) and its comments' JSON texts (a
 * text[] in order). A list reads them from its wrapper (`x`), a detail from its own joins.
 */
const restPostJson = (row: string, authorName: string, comments: string) => jsonObjectSql(row, [
  ...postShape.jsonKeys,
  ['user', 'json?', authorJson(`${row}.user_id`, authorName)],
  ['comments', 'json', jsonArraySql(comments)],
  ['comments_count', 'int', `cardinality(${comments})`],
]);

/** A REST comment over comment `c` (commentShape's keys) and its author `cu`. */
const restCommentJson = jsonObjectSql('c', [...commentShape.jsonKeys, ['user', 'json?', authorJson('cu.id', 'cu.name')]]);

/**
 * The comments of the post row `p`, oldest first, as `comments_json`: a text[] of their REST
 * answers, their authors joined from the users the ORM's filters show (leftJoinAuthor, as the
 * GraphQL embed does), so a soft-deleted author is null here as there.
 */
async function commentsQuery(em: EntityManager) {
  const qb = em.createQueryBuilder(Comment, 'c').select(raw(`${jsonAggSql(restCommentJson, 'c.created_at, c.id')} as comments_json`)).where('c.post_id = p.id');
  await leftJoinAuthor(em, qb, 'cu', 'c');
  return qb;
}

/** Each post's REST answer as JSON text, from the post statement it wraps (post.queries.ts postSource). */
const postJsonProjection: PostProjection<JsonText & { id: number }> = {
  name: 'rest',
  async statement(em, qb, orderBy, extra) {
    const comments = await commentsQuery(em);
    if (orderBy === null && !extra.length) {
      // One row at most (a detail, a write's read-back): its answer over its own joins, the
      // comments a lateral join. Wrapped as a list is, PostgreSQL copied the row through a
      // subquery scan first: about 25 µs more of its CPU per detail.
      qb.select([raw('p.id'), raw(`${restPostJson('p', 'u.name', 'cm.comments_json')}::text as json`)]);
      qb.innerJoinLateral(comments, 'cm', { [raw('true')]: [] });
      return statementOf(qb);
    }
    const sub = statementOf(comments);
    // The users' filter is `deleted_at is null`: no values. One with values would need them spliced in order.
    if (sub.params.length) throw new Error('comments JSON: a filter with values is not supported here');
    qb.addSelect(raw(`(${sub.sql}) as comments_json`));
    const inner = statementOf(qb);
    const order = orderBy ? ` order by ${orderSql(em, orderBy, 'x')}` : '';
    return { sql: `select x.id, ${restPostJson('x', 'x.author_name', 'x.comments_json')}::text as json${extra.map((c) => `, x.${c}`).join('')} from (${inner.sql}) x${order}`, params: inner.params };
  },
  map: (_ctx, rows) => rows.map((r) => ({ id: r.id, json: (r as unknown as JsonText).json })),
};

/** A list of posts as their REST answers (GET /posts, GET /trash). */
export function postJsonSource(ctx: PostReadContext, filters?: Record<string, boolean>): ListSource<JsonText & { id: number }> {
  return postSource(ctx, postJsonProjection, filters);
}

/**
 * One post's REST answer, or null when the ORM's filters (minus the switches in `filters`) hide
 * it. `ctx.em` may be a write's transaction: the answer is then the row as the write left it.
 */
export async function postJson(ctx: PostReadContext, id: number, filters?: Record<string, boolean>): Promise<string | null> {
  return (await postById(ctx, postJsonProjection, id, filters))?.json ?? null;
}

/** The statement of one post's REST answer (as `json`), read through `em` (a write's transaction): a create's answer. */
export const postJsonStatement = (em: EntityManager, id: number): Promise<Statement> => postByIdStatement(readContextOf(em), postJsonProjection, id);

/** The statement of one comment's REST answer (as `json`), or of no row when there is no such comment. */
export async function commentJsonStatement(em: EntityManager, id: number): Promise<Statement> {
  const qb = em.createQueryBuilder(Comment, 'c').select(raw(`${restCommentJson}::text as json`)).where({ id });
  await leftJoinAuthor(em, qb, 'cu', 'c');
  return statementOf(qb);
}

/** One comment's REST answer, or null when there is no such comment. */
async function commentJson(em: EntityManager, id: number): Promise<string | null> {
  const [row] = await runStatement<JsonText>(em, await commentJsonStatement(em, id));
  return row?.json ?? null;
}

/** The answer of a write, which must see its own row: a row it cannot read back is a bug (500). */
export function written(json: string | null, what: string): string {
  if (json === null) throw new Error(`${what} is not visible to its own write`);
  return json;
}

/** A written post's answer (core/row-lock.ts ReadBack): read back in the write's transaction. */
export const writtenPostJson = async (tx: EntityManager, post: Post): Promise<string> => written(await postJson(readContextOf(tx), post.id), `post ${post.id}`);

/** An edited comment's answer (core/row-lock.ts ReadBack). */
export const writtenCommentJson = async (em: EntityManager, comment: Comment): Promise<string> => written(await commentJson(em, comment.id), `comment ${comment.id}`);

/** Several posts' REST answers by id, trashed ones included (their JSON says so): GraphQL's `etag` batch. */
export async function postJsons(ctx: PostReadContext, ids: readonly number[]): Promise<Map<number, string>> {
  const { rows } = await postJsonSource(ctx, { softDelete: false }).slice({ id: { $in: [...ids] } }, { orderBy: { id: 'asc' }, limit: ids.length });
  return new Map(rows.map((r) => [r.id, r.json]));
}

/** Several comments' REST answers by id: GraphQL's `etag` batch. */
export async function commentJsons(em: EntityManager, ids: readonly number[]): Promise<Map<number, string>> {
  const qb = em.createQueryBuilder(Comment, 'c').select(['c.id', raw(`${restCommentJson}::text as json`)]).where({ id: { $in: [...ids] } });
  await leftJoinAuthor(em, qb, 'cu', 'c');
  const rows = await qb.execute<(JsonText & { id: number })[]>('all', false);
  return new Map(rows.map((r) => [r.id, r.json]));
}

/** A post's current tag, read in the write's transaction `tx` (core/etag.ts checkPrecondition). */
export const currentPostTag = async (tx: EntityManager, id: number): Promise<string> =>
  entityTag(written(await postJson(readContextOf(tx), id, { softDelete: false }), `post ${id}`));

/** A comment's current tag, read in the write's transaction `tx`. */
export const currentCommentTag = async (tx: EntityManager, id: number): Promise<string> => entityTag(written(await commentJson(tx, id), `comment ${id}`));
