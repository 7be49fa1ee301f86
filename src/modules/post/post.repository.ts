import { raw, type EntityManager, type FilterQuery, type QBFilterQuery, type QueryBuilder, type QueryOrderMap, type RawQueryFragment } from '@mikro-orm/postgresql';
import { readContextOf, type ReadContext, type RequestContext } from '../../core/context';
import { entityTag } from '../../core/etag';
import type { ListSource, SliceOptions } from '../../core/pagination';
import { jsonArraySql, jsonKeysOf, jsonObjectSql, written } from '../../db/json-sql';
import { PAGE_VERSION_SQL, pageWithTotal } from '../../db/list-totals';
import { cachedStatement, numbersAsParams, param, runStatement, shapeKey, sql, statementKey, statementOf, type Statement } from '../../db/statements';
import { commentsJsonOfPost } from '../comment/comment.repository';
import { authorJsonSql, leftJoinAuthor } from '../user/user.repository';
import { Post } from './post.entity';
import { suffixedSlugPrefix } from './post.slug';
import { postShape, type PostColumns } from './post.types';

/** The posts' statements: every read of posts, their REST answer, the slugs'. Their SQL: post.repository.sql (npm run sql). */

/** A row of the post statement: postShape's columns, the author's name (null: the users' filter hid it), a page's total and data version. */
type PostRow = PostColumns & { author_name: string | null; total?: string | number; version?: string | null };

/** What a page selects besides its rows (db/list-totals.ts): `count`, its total and the data version; `version`, the version alone. */
type TotalColumns = 'count' | 'version';

/** ORDER BY of a post order map over the columns of alias `x` (column names from the ORM's metadata). */
function orderSql(em: EntityManager, orderBy: QueryOrderMap<object>[] | QueryOrderMap<object>, x: string): string {
  const props = em.getMetadata().get(Post).properties as Record<string, { fieldNames: string[] }>;
  return (Array.isArray(orderBy) ? orderBy : [orderBy])
    .flatMap((o) => Object.entries(o).map(([k, dir]) => `${x}."${props[k].fieldNames[0]}" ${String(dir).toLowerCase() === 'asc' ? 'asc' : 'desc'}`))
    .join(', ');
}

/** What a projection may do with the post statement's builder: change its select, join a sub-query laterally, then compile it. */
interface PostStatementBuilder {
  addSelect(field: RawQueryFragment): unknown;
  select(fields: RawQueryFragment[]): unknown;
  innerJoinLateral(sub: Parameters<QueryBuilder<Post>['innerJoinLateral']>[0], alias: string, cond: Record<string, never[]>): unknown;
  getQuery(): string;
  getParams(): readonly unknown[];
}

/** What a read of posts is read as (a projection): the same rows, the same filters, another select. */
export interface PostProjection<T, C extends PostReadContext = PostReadContext> {
  /** Names the projection in the statement's cache key. */
  readonly name: string;
  /**
   * Its statement around the post statement `qb` (alias `p`, the author `u`, PostRow's columns):
   * it may add to `qb`, replace its select or wrap it, passing on the columns `extra`, its rows in
   * the order `orderBy` (null for one row at most: a detail). Without it, `qb`'s rows as they are.
   */
  statement?(em: EntityManager, qb: PostStatementBuilder, orderBy: QueryOrderMap<object>[] | QueryOrderMap<object> | null, extra: readonly string[]): Promise<Statement>;
  map(ctx: C, rows: PostRow[]): T[];
}

/** What a read of posts needs of a request: its EntityManager and, for a list, whether a replica may answer. */
export type PostReadContext = ReadContext & Pick<RequestContext, 'readFrom'>;

/** The post list's page size and order (PostService.list). */
export const POSTS_PER_PAGE = 10;
export const POST_LIST_ORDER: QueryOrderMap<object>[] = [{ createdAt: 'desc' }, { id: 'desc' }];

/** How a caller reads a list of posts: GraphQL's views (post.loaders.ts postViewSource) or REST's JSON (postJsonSource). */
export type PostListReader<T> = (ctx: RequestContext, filters?: Record<string, boolean>) => ListSource<T>;

/**
 * Lists of posts, one statement per slice: the posts, their authors and, for the page format,
 * the total as an uncorrelated subquery (or the one counted before at the same data version:
 * db/list-totals.ts), then what `projection` makes of them. Every reader of posts is this one
 * builder; only the projection differs. Visibility stays the ORM's: the posts' filters (minus the
 * switches in `filters`, as the trash lifts softDelete) in WHERE, the users' in the author JOIN.
 */
export function postSource<T, C extends PostReadContext>(ctx: C, projection: PostProjection<T, C>, filters: Record<string, boolean> = {}): ListSource<T> {
  return {
    async slice(where, opts) {
      const stale = ctx.readFrom === 'read';
      const read = async (total?: TotalColumns) =>
        runStatement<PostRow>(ctx.reader(), await postStatement(ctx, projection, filters, where, opts, total), { stale });
      if (!opts.withTotal) return { rows: projection.map(ctx, await read()), total: null };
      const page = await pageWithTotal(ctx.reader(), totalKey(ctx.reader(), where, filters), stale, (count) => read(count ? 'count' : 'version'));
      return { rows: projection.map(ctx, page.rows), total: page.total };
    },
    async count(where) {
      const [{ count }] = await runStatement<{ count: string }>(ctx.em, statementOf(await counter(ctx.em, where, filters)));
      return Number(count);
    },
  };
}

/** The posts' count under the ORM's filters (minus the switches in `filters`). */
async function counter(em: EntityManager, where: FilterQuery<object>, filters: Record<string, boolean>) {
  const qb = em.createQueryBuilder(Post, 'c').count().where(where as QBFilterQuery<Post>);
  await qb.applyFilters(filters);
  return qb;
}

/** Which count a page's total is (db/list-totals.ts): the counter's statement key and its values. */
function totalKey(em: EntityManager, where: FilterQuery<object>, filters: Record<string, boolean>): string {
  const values: unknown[] = [];
  const shape = `posts total ${shapeKey(where, values)} ${JSON.stringify(filters)}`;
  return `${statementKey(em, shape)}\u0000${JSON.stringify(values)}`;
}

/** The statement of one slice of postSource (with a page's `total` columns), built on the request's reader, not yet run. */
async function postStatement<T, C extends PostReadContext>(
  ctx: C,
  projection: PostProjection<T, C>,
  filters: Record<string, boolean>,
  where: FilterQuery<object>,
  { orderBy, limit, offset }: SliceOptions,
  total?: TotalColumns,
): Promise<Statement> {
  // A page with an OFFSET is a deferred join: the slice's ids first, from an index alone where the
  // filters allow (posts_live_created_at_id_index, posts_deleted_at_id_index), then only those
  // rows with their authors: otherwise every row a deep page skips costs a heap fetch (npm run
  // explain). Cached per shape: the where-object's numbers and the offset are declared parameters.
  const values: unknown[] = [];
  const shape = `posts ${projection.name} ${shapeKey(where, values)} ${JSON.stringify(orderBy)} ${JSON.stringify(filters)} ${total ?? 'rows'} ${limit} ${offset !== undefined}`;
  const offsetAt = values.length;
  if (offset !== undefined) values.push(offset);
  return cachedStatement(ctx.reader(), shape, values, async (em) => {
    const w = numbersAsParams(where) as QBFilterQuery<Post>;
    const qb = em.createQueryBuilder(Post, 'p').select(postShape.select('p')).orderBy(orderBy);
    if (offset === undefined) {
      // Nothing skipped (a detail, a cursor slice): the rows themselves, no deferred join.
      qb.where(w).limit(limit);
      await qb.applyFilters(filters);
    } else {
      const ids = em.createQueryBuilder(Post, 's').select('s.id').where(w).orderBy(orderBy).limit(limit);
      await ids.applyFilters(filters);
      // The offset after the ids' LIMIT, as a declared parameter (the builder's offset() takes a number only).
      const slice = statementOf(ids);
      qb.where(`p.id in (${slice.sql} offset ?)`, [...slice.params, param(offsetAt)]);
    }
    await leftJoinAuthor(em, qb, 'u', 'p');
    qb.addSelect(raw('u.name as author_name'));
    if (total === 'count') qb.addSelect((await counter(em, w, filters)).as('total'));
    if (total) qb.addSelect(raw(`${PAGE_VERSION_SQL} as version`));
    // One row needs no order, and a projection may then read it flat (REST's JSON): a wrapper's
    // ORDER BY would cost every detail a Sort of its row, JSON included.
    const extra = total === 'count' ? ['total', 'version'] : total ? ['version'] : [];
    return projection.statement ? projection.statement(em, qb, limit > 1 ? orderBy : null, extra) : statementOf(qb);
  });
}

const BY_ID: SliceOptions = { orderBy: { id: 'asc' }, limit: 1 };

/**
 * One post by id as `projection` reads it (under the ORM's filters, minus the switches in
 * `filters`), or null when hidden or gone: the list's builder with a where of one id.
 */
export async function postById<T, C extends PostReadContext>(ctx: C, projection: PostProjection<T, C>, id: number, filters: Record<string, boolean> = {}): Promise<T | null> {
  const [post] = (await postSource(ctx, projection, filters).slice({ id }, BY_ID)).rows;
  return post ?? null;
}

/**
 * The REST post, built by PostgreSQL as JSON text (db/json-sql.ts) over the post statement's row
 * `row`, its author's name and its comments' JSON texts (a text[]): every route that returns a post
 * (writes read theirs back in their transaction) and every tag, REST's and GraphQL's, read it here.
 */
const postJsonSql = (row: string, authorName: string, comments: string) => jsonObjectSql(row, [
  ...jsonKeysOf(postShape),
  ['user', 'json?', authorJsonSql(`${row}.user_id`, authorName)],
  ['comments', 'json', jsonArraySql(comments)],
  ['comments_count', 'int', `cardinality(${comments})`],
]);

/** Each post's REST answer as JSON text, from the post statement it wraps (postSource). */
const postJsonProjection: PostProjection<{ id: number; json: string }> = {
  name: 'rest',
  async statement(em, qb, orderBy, extra) {
    const comments = await commentsJsonOfPost(em);
    if (orderBy === null && !extra.length) {
      // One row at most (a detail, a write's read-back): its answer over its own joins, the
      // comments a lateral join. Wrapped as a list is, PostgreSQL copied the row through a
      // subquery scan first: about 25 µs more of its CPU per detail.
      qb.select([raw('p.id'), raw(`${postJsonSql('p', 'u.name', 'cm.comments_json')}::text as json`)]);
      qb.innerJoinLateral(comments, 'cm', { [raw('true')]: [] });
      return statementOf(qb);
    }
    const sub = statementOf(comments);
    // The users' filter is `deleted_at is null`: no values. One with values would need them spliced in order.
    if (sub.params.length) throw new Error('comments JSON: a filter with values is not supported here');
    qb.addSelect(raw(`(${sub.sql}) as comments_json`));
    const inner = statementOf(qb);
    const order = orderBy ? ` order by ${orderSql(em, orderBy, 'x')}` : '';
    return { sql: `select x.id, ${postJsonSql('x', 'x.author_name', 'x.comments_json')}::text as json${extra.map((c) => `, x.${c}`).join('')} from (${inner.sql}) x${order}`, params: inner.params };
  },
  map: (_ctx, rows) => rows.map((r) => ({ id: r.id, json: (r as unknown as { json: string }).json })),
};

/** A list of posts as their REST answers (GET /posts, GET /trash). */
export function postJsonSource(ctx: PostReadContext, filters?: Record<string, boolean>): ListSource<{ id: number; json: string }> {
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
export const postJsonStatement = (em: EntityManager, id: number): Promise<Statement> => postStatement(readContextOf(em), postJsonProjection, {}, { id }, BY_ID);

/** A written post's answer (core/row-lock.ts ReadBack): read back in the write's transaction. */
export const writtenPostJson = async (tx: EntityManager, post: Post): Promise<string> => written(await postJson(readContextOf(tx), post.id), `post ${post.id}`);

/** Several posts' REST answers by id, trashed ones included (their JSON says so): GraphQL's `etag` batch. */
export async function postJsons(ctx: PostReadContext, ids: readonly number[]): Promise<Map<number, string>> {
  const { rows } = await postJsonSource(ctx, { softDelete: false }).slice({ id: { $in: [...ids] } }, { orderBy: { id: 'asc' }, limit: ids.length });
  return new Map(rows.map((r) => [r.id, r.json]));
}

/** A post's current tag, read in the write's transaction `tx` (core/etag.ts checkPrecondition). */
export const currentPostTag = async (tx: EntityManager, id: number): Promise<string> =>
  entityTag(written(await postJson(readContextOf(tx), id, { softDelete: false }), `post ${id}`));

/** Creates of one base slug queue on this transaction-scoped lock (PostService.create): two keys, apart from the one-key locks. */
export async function lockSlug(tx: EntityManager, base: string): Promise<void> {
  await runStatement(tx, sql`select pg_advisory_xact_lock(${4711}, hashtext(${base}))`);
}

/**
 * The slugs that may be `base`'s siblings, trashed posts' too (slugs are unique across both). With C
 * collation (the embedded cluster's) the unique slug index answers both conditions, the `like` as a
 * range scan. Slugs hold only [a-z0-9-], so the prefix needs no escaping.
 */
export async function takenSlugs(tx: EntityManager, base: string): Promise<string[]> {
  const rows = await runStatement<{ slug: string }>(tx, sql`select slug from posts where slug = ${base} or slug like ${`${suffixedSlugPrefix(base)}%`}`);
  return rows.map((r) => r.slug);
}
