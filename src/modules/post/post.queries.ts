import { raw, type EntityManager, type FilterQuery, type QBFilterQuery, type QueryOrderMap } from '@mikro-orm/postgresql';
import type { RequestContext } from '../../core/context';
import type { ListSource } from '../../core/pagination';
import { jsonAggSql, jsonArraySql, jsonObjectSql } from '../../core/json-sql';
import { numbersOut, shapeKey, StatementShapes } from '../../core/statement-shapes';
import { authorLoader, leftJoinAuthor, withAuthor } from './post.loaders';
import { Comment } from '../comment/comment.entity';
import { Post } from './post.entity';
import type { PostJson, PostView } from './post.types';

const shapes = new StatementShapes();

/** A post row with its author's name (null when the users' filter hid the author) and, when asked, the list total. */
interface PostRow {
  id: number;
  user_id: number;
  title: string;
  slug: string;
  body: string;
  published: boolean;
  /** Raw timestamptz text: MikroORM turns off pg's date parsing and converts on hydration. */
  published_at: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  author_name: string | null;
  total?: string | number;
  /** The REST answer for this post (shape 'json'). */
  json?: string;
}

/** An author as REST embeds it (CONTRACT 4): id and name; null when the users' filter hid the user. */
const authorJson = (id: string, name: string) => `case when ${name} is null then null else ${jsonObjectSql('', [['id', 'int', id], ['name', 'string', name]])} end`;

/**
 * The REST post (CONTRACT 4) over a row of the post statement (alias `x`): its columns, the
 * author's name (null when the users' filter hid the author) and its comments' JSON texts
 * (`comments_json`, a text[] in order).
 */
const restPostJson = (x: string) => jsonObjectSql(x, [
  ['id', 'int'], ['user_id', 'int'], ['title', 'string'], ['slug', 'string'], ['body', 'string'], ['published', 'bool'],
  ['published_at', 'timestamp?'], ['created_at', 'timestamp'], ['updated_at', 'timestamp'], ['deleted_at', 'timestamp?'],
  ['user', 'json?', authorJson(`${x}.user_id`, `${x}.author_name`)],
  ['comments', 'json', jsonArraySql(`${x}.comments_json`)],
  ['comments_count', 'int', `cardinality(${x}.comments_json)`],
]);

/** A REST comment (CONTRACT 4) over comment `c` and its author `cu`. */
const restCommentJson = jsonObjectSql('c', [
  ['id', 'int'], ['post_id', 'int'], ['user_id', 'int'], ['body', 'string'], ['created_at', 'timestamp'], ['updated_at', 'timestamp'],
  ['user', 'json?', authorJson('cu.id', 'cu.name')],
]);

/**
 * A post's comments (of the post row `p`), oldest first, each with its author, as REST JSON texts (a text[]):
 * built by the ORM's QueryBuilder like the GraphQL embed (commentsLoader), the author joined from
 * the users the ORM's filters show (leftJoinAuthor), so a soft-deleted author is null here as there.
 */
async function commentsJsonSql(em: EntityManager): Promise<string> {
  const qb = em
    .createQueryBuilder(Comment, 'c')
    .select(raw(jsonAggSql(restCommentJson, 'c.created_at, c.id')))
    .where('c.post_id = p.id');
  await leftJoinAuthor(em, qb, 'cu', 'c');
  const { sql, bindings } = qb.getKnexQuery().toSQL();
  // The users' filter is `deleted_at is null`: no values. One with values would need them spliced in order.
  if (bindings.length) throw new Error('comments JSON: a filter with bindings is not supported here');
  return sql;
}

/** ORDER BY of a post order map over the columns of alias `x` (column names from the ORM's metadata). */
function orderSql(em: EntityManager, orderBy: QueryOrderMap<object>[] | QueryOrderMap<object>, x: string): string {
  const props = em.getMetadata().get(Post.name).properties as Record<string, { fieldNames: string[] }>;
  return (Array.isArray(orderBy) ? orderBy : [orderBy])
    .flatMap((o) => Object.entries(o).map(([k, dir]) => `${x}."${props[k].fieldNames[0]}" ${String(dir).toLowerCase() === 'asc' ? 'asc' : 'desc'}`))
    .join(', ');
}

/**
 * Lists of posts read as plain views, not entities: one statement per slice returns the posts,
 * their authors (primed into authorLoader, so `user` costs nothing more) and, for the page
 * format, the total as an uncorrelated subquery. Hydrating entities and a statement per embed
 * were most of the service's CPU on GET /posts (npm run bench). Visibility stays the ORM's:
 * the posts' filters (softDelete, or the switches the caller passes, as the trash does) go into
 * WHERE, the users' filter into the author JOIN.
 */
export function postViewSource(ctx: RequestContext, filters: Record<string, boolean> = {}): ListSource<PostView> {
  return postSource(ctx, 'view', filters) as ListSource<PostView>;
}

/**
 * What a read of posts returns: plain views (GraphQL resolvers, services), or each post's REST
 * answer (CONTRACT 4: snake_case, ISO timestamps, author, comments with their authors, count)
 * as JSON text built by PostgreSQL in the same statement (`json`). Both are one builder: the
 * same slice of ids under the same ORM filters, the same author JOIN; only the select differs.
 */
export type PostShape = 'view' | 'json';

export function postSource(ctx: RequestContext, shape: 'json', filters?: Record<string, boolean>): ListSource<PostJson>;
export function postSource(ctx: RequestContext, shape: PostShape, filters?: Record<string, boolean>): ListSource<PostView | PostJson>;
export function postSource(ctx: RequestContext, shape: PostShape, filters: Record<string, boolean> = {}): ListSource<PostView | PostJson> {
  // Wrapped: a QueryBuilder is thenable, so an async function returning one would run it.
  const counter = async (where: FilterQuery<object>) => {
    const qb = ctx.em.createQueryBuilder(Post, 'c').count().where(where as QBFilterQuery<Post>);
    await qb.applyFilters(filters);
    return { qb };
  };
  return {
    async slice(where, { orderBy, limit, offset, withTotal }) {
      // A page with an OFFSET is a deferred join: the slice's ids first, read from an index alone where the filters allow
      // (posts_live_created_at_id_index, posts_deleted_at_id_index: no heap visit per row an
      // OFFSET skips), then only those rows with their authors. Joined or read whole before
      // LIMIT/OFFSET, every skipped row of a deep page costs a heap fetch (npm run explain).
      // Built once per shape (StatementShapes): the where-object's numbers, the limit and the
      // offset are this request's values; everything else is the shape.
      const values: number[] = [];
      const key = `posts ${shape} ${shapeKey(where, values)} ${JSON.stringify(orderBy)} ${JSON.stringify(filters)} ${withTotal ?? false} ${offset !== undefined}`;
      const at = values.length;
      values.push(limit, offset ?? 0);
      const rows = await shapes.rows<PostRow>(ctx, key, values, async (n) => {
        const em = ctx.em;
        const w = numbersOut(where, [], n) as QBFilterQuery<Post>;
        const qb = em
          .createQueryBuilder(Post, 'p')
          .select(['p.id', 'p.user_id as user_id', 'p.title', 'p.slug', 'p.body', 'p.published', 'p.publishedAt', 'p.createdAt', 'p.updatedAt', 'p.deletedAt', 'u.name as author_name'])
          .orderBy(orderBy as never);
        if (offset === undefined) {
          // Nothing skipped (a detail, a cursor slice): the rows themselves, no deferred join.
          qb.where(w).limit(n(at));
          await qb.applyFilters(filters);
        } else {
          const ids = em.createQueryBuilder(Post, 's').select('s.id').where(w).orderBy(orderBy as never).limit(n(at), n(at + 1));
          await ids.applyFilters(filters);
          qb.where({ id: { $in: ids.getKnexQuery() } } as QBFilterQuery<Post>);
        }
        await leftJoinAuthor(em, qb, 'u', 'p');
        if (withTotal) qb.addSelect((await counter(w)).qb.as('total'));
        if (shape === 'view') return qb.getKnexQuery().toSQL();
        qb.addSelect(raw(`(${await commentsJsonSql(em)}) as comments_json`));
        const inner = qb.getKnexQuery().toSQL();
        return { sql: `select x.id, ${restPostJson('x')}::text as json${withTotal ? ', x.total' : ''} from (${inner.sql}) x order by ${orderSql(em, orderBy, 'x')}`, bindings: inner.bindings };
      }, ctx.readFrom === 'read');
      if (shape === 'json') {
        return { rows: rows.map((r) => ({ id: r.id, json: r.json! })), total: withTotal && rows.length ? Number(rows[0].total) : null };
      }
      const authors = authorLoader(ctx);
      const platform = ctx.reader().getPlatform();
      const date = (v: string | null) => (v === null ? null : (platform.parseDate(v) as Date));
      const views = rows.map((r): PostView => {
        const author = r.author_name === null ? null : { id: r.user_id, name: r.author_name };
        authors.prime(r.user_id, author);
        return withAuthor({
          id: r.id, userId: r.user_id, title: r.title, slug: r.slug, body: r.body, published: r.published,
          publishedAt: date(r.published_at), createdAt: date(r.created_at)!, updatedAt: date(r.updated_at)!, deletedAt: date(r.deleted_at),
        }, author);
      });
      return { rows: views, total: withTotal && rows.length ? Number(rows[0].total) : null };
    },
    async count(where) {
      const [{ count }] = (await (await counter(where)).qb.execute('all', false)) as { count: string }[];
      return Number(count);
    },
  };
}

/** One post as `post(id)` answers it (the filters of postViewSource), or null when hidden or gone. */
export async function findPostView(ctx: RequestContext, id: number): Promise<PostView | null> {
  const [post] = (await postViewSource(ctx).slice({ id }, { orderBy: { id: 'asc' }, limit: 1 })).rows;
  return post ?? null;
}
