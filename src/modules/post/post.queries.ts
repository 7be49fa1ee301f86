import type { FilterQuery, QBFilterQuery } from '@mikro-orm/postgresql';
import type { RequestContext } from '../../core/context';
import type { ListSource } from '../../core/pagination';
import { numbersOut, StatementShapes } from '../../core/statement-shapes';
import { authorJoinFilter, authorLoader } from './post.loaders';
import { Post } from './post.entity';
import type { PostView } from './post.types';

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
  const { em } = ctx;
  // Wrapped: a QueryBuilder is thenable, so an async function returning one would run it.
  const counter = async (where: FilterQuery<object>) => {
    const qb = em.createQueryBuilder(Post, 'c').count().where(where as QBFilterQuery<Post>);
    await qb.applyFilters(filters);
    return { qb };
  };
  return {
    async slice(where, { orderBy, limit, offset, withTotal }) {
      // A deferred join: the slice's ids first, read from an index alone where the filters allow
      // (posts_live_created_at_id_index, posts_deleted_at_id_index: no heap visit per row an
      // OFFSET skips), then only those rows with their authors. Joined or read whole before
      // LIMIT/OFFSET, every skipped row of a deep page costs a heap fetch (npm run explain).
      // Built once per shape (StatementShapes): the where-object's numbers, the limit and the
      // offset are this request's values; everything else is the shape.
      const values: number[] = [];
      const key = JSON.stringify(['posts', numbersOut(where, values, () => '#'), orderBy, filters, withTotal ?? false, offset !== undefined]);
      const at = values.length;
      values.push(limit, offset ?? 0);
      const rows = await shapes.rows<PostRow>(em, key, values, async (n) => {
        const w = numbersOut(where, [], n) as QBFilterQuery<Post>;
        const ids = em.createQueryBuilder(Post, 's').select('s.id').where(w).orderBy(orderBy as never).limit(n(at), offset === undefined ? undefined : n(at + 1));
        await ids.applyFilters(filters);
        const authorFilter = await authorJoinFilter(em);
        const qb = em
          .createQueryBuilder(Post, 'p')
          .select(['p.id', 'p.user_id as user_id', 'p.title', 'p.slug', 'p.body', 'p.published', 'p.publishedAt', 'p.createdAt', 'p.updatedAt', 'p.deletedAt', 'u.name as author_name'])
          .leftJoin('p.user', 'u', authorFilter)
          .where({ id: { $in: ids.getKnexQuery() } } as QBFilterQuery<Post>)
          .orderBy(orderBy as never);
        if (withTotal) qb.addSelect((await counter(w)).qb.as('total'));
        return qb.getKnexQuery().toSQL();
      });
      const authors = authorLoader(ctx);
      const platform = em.getPlatform();
      const date = (v: string | null) => (v === null ? null : (platform.parseDate(v) as Date));
      const views = rows.map((r): PostView => {
        authors.prime(r.user_id, r.author_name === null ? null : { id: r.user_id, name: r.author_name });
        return {
          id: r.id, userId: r.user_id, title: r.title, slug: r.slug, body: r.body, published: r.published,
          publishedAt: date(r.published_at), createdAt: date(r.created_at)!, updatedAt: date(r.updated_at)!, deletedAt: date(r.deleted_at),
        };
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
