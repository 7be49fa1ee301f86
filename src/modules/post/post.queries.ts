import { raw, type RawQueryFragment, type EntityManager, type QueryBuilder, type FilterQuery, type QBFilterQuery, type QueryOrderMap } from '@mikro-orm/postgresql';
import type { ReadContext, RequestContext } from '../../core/context';
import type { ListSource, SliceOptions } from '../../core/pagination';
import { PAGE_VERSION_SQL, pageWithTotal } from '../../db/list-totals';
import { cachedStatement, numbersAsParams, param, runStatement, shapeKey, statementKey, statementOf, type Statement } from '../../db/statements';
import { authorLoader, leftJoinAuthor, withAuthor } from './post.loaders';
import { Post } from './post.entity';
import { postShape, type PostColumns, type PostView } from './post.types';

/**
 * A row of the post statement: postShape's columns (post.types.ts), its author's name (null when
 * the users' filter hid the author) and, when asked, the list total.
 */
type PostRow = PostColumns & {
  author_name: string | null;
  total?: string | number;
  /** The version of the public data the row was read at (db/list-totals.ts); only on a page's rows. */
  version?: string | null;
};

/**
 * What a page statement selects besides its rows (db/list-totals.ts): `count`, the list's total
 * and the data version; `version`, the version alone (the total is one counted before).
 */
type TotalColumns = 'count' | 'version';

/** ORDER BY of a post order map over the columns of alias `x` (column names from the ORM's metadata). */
export function orderSql(em: EntityManager, orderBy: QueryOrderMap<object>[] | QueryOrderMap<object>, x: string): string {
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
   * The statement of this projection around the post statement `qb` (alias `p`, its author as
   * `u`, its columns those of PostRow, `total` and `version` among them when a page asks):
   * it may add to `qb`, replace its select or wrap it, passing on the columns `extra`. The rows it returns keep the
   * order `orderBy`; null when the slice is one row at most (a detail), which has no order to keep.
   */
  statement(em: EntityManager, qb: PostStatementBuilder, orderBy: QueryOrderMap<object>[] | QueryOrderMap<object> | null, extra: readonly string[]): Promise<Statement>;
  /** The projection's values of the rows its statement returned. */
  map(ctx: C, rows: PostRow[]): T[];
}

/** What a read of posts needs of a request: its EntityManager and, for a list, whether a replica may answer. */
export type PostReadContext = ReadContext & Pick<RequestContext, 'readFrom'>;

/**
 * Posts as plain views, not entities: the rows of the post statement, their authors primed into
 * authorLoader (so `user` costs nothing more). Hydrating entities and a statement per embed were
 * most of the service's CPU on GET /posts (npm run bench).
 */
const postViews: PostProjection<PostView, RequestContext> = {
  name: 'view',
  statement: async (_em, qb) => statementOf(qb),
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

/** The post list's page size and order (PostService.list). */
export const POSTS_PER_PAGE = 10;
export const POST_LIST_ORDER: QueryOrderMap<object>[] = [{ createdAt: 'desc' }, { id: 'desc' }];

/** Posts as plain views under the ORM's filters (postSource with postViews). */
export function postViewSource(ctx: RequestContext, filters: Record<string, boolean> = {}): ListSource<PostView> {
  return postSource(ctx, postViews, filters);
}

/** How a caller reads a list of posts: postViewSource, or another projection of postSource (REST's JSON). */
export type PostListReader<T> = (ctx: RequestContext, filters?: Record<string, boolean>) => ListSource<T>;

/**
 * Lists of posts, one statement per slice: the posts, their authors and, for the page format,
 * the total as an uncorrelated subquery (or the one counted before at the same data version:
 * db/list-totals.ts), then what `projection` makes of them. Every reader of
 * posts (GraphQL views, REST's JSON) is this one builder: the same slice of ids under the same
 * ORM filters, the same author JOIN; only the projection differs. Visibility stays the ORM's:
 * the posts' filters (softDelete, or the switches the caller passes, as the trash does) go into
 * WHERE, the users' filter into the author JOIN.
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
      const [{ count }] = await (await counter(ctx.em, where, filters)).qb.execute<{ count: string }[]>('all', false);
      return Number(count);
    },
  };
}

/**
 * The posts' count under the ORM's filters (minus the switches in `filters`). Wrapped: a
 * QueryBuilder is thenable, so an async function returning one would run it.
 */
async function counter(em: EntityManager, where: FilterQuery<object>, filters: Record<string, boolean>) {
  const qb = em.createQueryBuilder(Post, 'c').count().where(where as QBFilterQuery<Post>);
  await qb.applyFilters(filters);
  return { qb };
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
  // A page with an OFFSET is a deferred join: the slice's ids first, read from an index alone where the filters allow
  // (posts_live_created_at_id_index, posts_deleted_at_id_index: no heap visit per row an
  // OFFSET skips), then only those rows with their authors. Joined or read whole before
  // LIMIT/OFFSET, every skipped row of a deep page costs a heap fetch (npm run explain).
  // Cached per shape (db/statements.ts): the where-object's numbers and the offset are this
  // request's values, declared as parameters; the limit (a page size) is part of the shape.
  const values: unknown[] = [];
  const shape = `posts ${projection.name} ${shapeKey(where, values)} ${JSON.stringify(orderBy)} ${JSON.stringify(filters)} ${total ?? 'rows'} ${limit} ${offset !== undefined}`;
  const offsetAt = values.length;
  if (offset !== undefined) values.push(offset);
  return cachedStatement(ctx.reader(), shape, values, async (em) => {
    const w = numbersAsParams(where) as QBFilterQuery<Post>;
    const qb = em
      .createQueryBuilder(Post, 'p')
      .select(postShape.select('p'))
      .orderBy(orderBy);
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
    if (total === 'count') qb.addSelect((await counter(em, w, filters)).qb.as('total'));
    if (total) qb.addSelect(raw(`${PAGE_VERSION_SQL} as version`));
    // One row needs no order, and a projection may then read it flat (REST's JSON): a wrapper's
    // ORDER BY would cost every detail a Sort of its row, JSON included.
    return projection.statement(em, qb, limit > 1 ? orderBy : null, total === 'count' ? ['total', 'version'] : total ? ['version'] : []);
  });
}

/** The statement that reads one post by id as `projection` does (postById), for a caller that runs it itself. */
export function postByIdStatement<T, C extends PostReadContext>(ctx: C, projection: PostProjection<T, C>, id: number): Promise<Statement> {
  return postStatement(ctx, projection, {}, { id }, BY_ID);
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

/** One post as `post(id)` answers it (the filters of postViewSource), or null when hidden or gone. */
export function findPostView(ctx: RequestContext, id: number): Promise<PostView | null> {
  return postById(ctx, postViews, id);
}
