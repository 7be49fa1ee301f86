import { raw, type EntityManager, type FilterQuery, type QBFilterQuery, type QueryBuilder, type QueryOrderMap } from '@mikro-orm/postgresql';
import { readContextOf, type ReadContext } from '../../core/context';
import { entityTag } from '../../core/etag';
import type { ListSource } from '../../core/pagination';
import type { RowOf } from '../../core/shape';
import { jsonKeysOf, jsonObjectSql, written } from '../../db/json-sql';
import { cachedStatement, numbersAsParams, param, runStatement, shapeKey, statementOf, type Statement } from '../../db/statements';
import { User } from './user.entity';
import { actorShape, authorShape, userShape, type Actor, type AuthorView, type UserView } from './user.types';

/** The users' statements: lists, REST answers, the caller, the authors others embed. Their SQL: user.repository.sql (npm run sql). */

/** A row of the users statement: userShape's columns and, for a page, the total. */
type UserRow = RowOf<typeof userShape> & { total?: string | number };

/** What a read of users is read as: the same rows under the same filters, another select. */
interface UserProjection<T> {
  /** Names the projection in the statement's cache key. */
  readonly name: string;
  /** The statement around the users statement `inner` (columns of UserRow), rows in the order `orderBy`. */
  statement(inner: Statement, orderBy: QueryOrderMap<object>[] | QueryOrderMap<object>, withTotal: boolean): Statement;
  map(ctx: ReadContext, rows: UserRow[]): T[];
}

/** Users as plain views, not entities. */
const userViews: UserProjection<UserView> = {
  name: 'view',
  statement: (inner) => inner,
  map: (ctx, rows, platform = ctx.reader().getPlatform()) => rows.map((r) => userShape.view(r, platform)),
};

/** How a caller reads a list of users: userViewSource (GraphQL), or userJsonSource (REST). */
export type UserListReader<T> = (ctx: ReadContext) => ListSource<T>;

export const userViewSource: UserListReader<UserView> = (ctx) => userSource(ctx, userViews);

/** The users' count under the ORM's filters. */
async function counter(em: EntityManager, where: FilterQuery<object>) {
  const qb = em.createQueryBuilder(User, 'c').count().where(where as QBFilterQuery<User>);
  await qb.applyFilters();
  return qb;
}

/** Users read as `projection`, one statement per slice: under the ORM's filters (active users), a page's total as a subquery. */
function userSource<T>(ctx: ReadContext, projection: UserProjection<T>): ListSource<T> {
  return {
    async slice(where, { orderBy, limit, offset, withTotal }) {
      const values: unknown[] = [];
      const shape = `users ${projection.name} ${shapeKey(where, values)} ${JSON.stringify(orderBy)} ${withTotal ?? false} ${limit} ${offset !== undefined}`;
      const offsetAt = values.length;
      if (offset !== undefined) values.push(offset);
      const em = ctx.reader();
      const statement = await cachedStatement(em, shape, values, async (em) => {
        const w = numbersAsParams(where) as QBFilterQuery<User>;
        const qb = em.createQueryBuilder(User, 'u').select(userShape.select('u')).where(w).orderBy(orderBy).limit(limit);
        await qb.applyFilters();
        if (withTotal) qb.addSelect((await counter(em, w)).as('total'));
        const users = statementOf(qb);
        // The offset after the LIMIT, as a declared parameter (the builder's offset() takes a number only).
        const inner = offset === undefined ? users : { sql: `${users.sql} offset ?`, params: [...users.params, param(offsetAt)] };
        return projection.statement(inner, orderBy, withTotal ?? false);
      });
      const rows = await runStatement<UserRow>(em, statement);
      return { rows: projection.map(ctx, rows), total: withTotal && rows.length ? Number(rows[0].total) : null };
    },
    async count(where) {
      const [{ count }] = await runStatement<{ count: string }>(ctx.em, statementOf(await counter(ctx.em, where)));
      return Number(count);
    },
  };
}

/**
 * The bearer token's user (auth.tokens.ts), active only, as a value, never its password hash. Not
 * a managed entity: nothing changes the caller through it, and hydrating one into the identity
 * map was the largest Node cost of an authenticated read after the SQL (npm run bench).
 */
export async function actorById(ctx: ReadContext, id: number): Promise<Actor | null> {
  const em = ctx.reader();
  const statement = await cachedStatement(em, 'actor by id', [id], async (em) => {
    const qb = em.createQueryBuilder(User, 'u').select(actorShape.select('u')).where({ id: param(0) } as never);
    await qb.applyFilters();
    return statementOf(qb);
  });
  const [row] = await runStatement<RowOf<typeof actorShape>>(em, statement);
  return row ? actorShape.view(row, em.getPlatform()) : null;
}

/** A user's REST answer, built by PostgreSQL as JSON text (db/json-sql.ts): every route that returns a user, and its tags. */
const USER_JSON = jsonObjectSql('x', jsonKeysOf(userShape));

/** The users' lists are ordered by id alone (user.service.ts); the JSON rows keep that order. */
function orderDirection(orderBy: unknown): string {
  const first = (Array.isArray(orderBy) ? orderBy[0] : orderBy) as Record<string, string> | undefined;
  if (!first || Object.keys(first).join() !== 'id') throw new Error('users JSON: only an id order is supported');
  return String(first.id).toLowerCase() === 'asc' ? ' asc' : ' desc';
}

const userJsonProjection: UserProjection<{ id: number; json: string }> = {
  name: 'rest',
  statement: (inner, orderBy, withTotal) => ({
    sql: `select x.id, ${USER_JSON}::text as json${withTotal ? ', x.total' : ''} from (${inner.sql}) x order by x.id${orderDirection(orderBy)}`,
    params: inner.params,
  }),
  map: (_ctx, rows) => rows as unknown as { id: number; json: string }[],
};

/** The admin list of users as their REST answers. */
export const userJsonSource: UserListReader<{ id: number; json: string }> = (ctx) => userSource(ctx, userJsonProjection);

/** One active user's REST answer, or null. */
export async function userJson(ctx: ReadContext, id: number): Promise<string | null> {
  const [user] = (await userSource(ctx, userJsonProjection).slice({ id }, { orderBy: { id: 'asc' }, limit: 1 })).rows;
  return user?.json ?? null;
}

/** A written user's answer (core/row-lock.ts ReadBack): read back in the write's transaction. */
export const writtenUserJson = async (tx: EntityManager, user: User): Promise<string> => written(await userJson(readContextOf(tx), user.id), `user ${user.id}`);

/** Several active users' REST answers by id: GraphQL's `etag` batch. */
export async function userJsons(ctx: ReadContext, ids: readonly number[]): Promise<Map<number, string>> {
  const { rows } = await userJsonSource(ctx).slice({ id: { $in: [...ids] } }, { orderBy: { id: 'asc' }, limit: ids.length });
  return new Map(rows.map((r) => [r.id, r.json]));
}

/** A user's current tag, read in the write's transaction `tx` (core/etag.ts checkPrecondition). */
export const currentUserTag = async (tx: EntityManager, id: number): Promise<string> => entityTag(written(await userJson(readContextOf(tx), id), `user ${id}`));

/**
 * LEFT JOINs the author of `owner`'s row to `qb` as `alias`, from the users the ORM's filters show
 * `em` (a hidden author joins as nulls): a User QueryBuilder with its filters applied by the ORM
 * (`applyFilters`), joined as a sub-query, which PostgreSQL flattens into a plain join.
 */
export async function leftJoinAuthor(em: EntityManager, qb: { leftJoin(users: QueryBuilder<User, 'vu', never, never, never, 'id' | 'name'>, alias: string, cond: object): unknown }, alias: string, owner: string): Promise<void> {
  const users = em.createQueryBuilder(User, 'vu').select(authorShape.select('vu'));
  await users.applyFilters();
  qb.leftJoin(users, alias, { [raw(`${alias}.id = ${owner}.user_id`)]: [] });
}

/** An author as REST embeds it, over its id and name columns: id and name; null when the users' filter hid the user. */
export const authorJsonSql = (id: string, name: string) => `case when ${name} is null then null else ${jsonObjectSql('', [['id', 'int', id], ['name', 'string', name]])} end`;

/** Authors by user id (GraphQL's embeds: post.loaders.ts); a soft-deleted user is missing. */
export async function authorsById(em: EntityManager, ids: readonly number[]): Promise<AuthorView[]> {
  const qb = em.createQueryBuilder(User, 'u').select(authorShape.select('u')).where({ id: { $in: [...ids] } });
  await qb.applyFilters();
  return runStatement<AuthorView>(em, statementOf(qb));
}
