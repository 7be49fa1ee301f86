import type { EntityManager, FilterQuery, QBFilterQuery, QueryOrderMap } from '@mikro-orm/postgresql';
import type { ReadContext } from '../../core/context';
import type { ListSource } from '../../core/pagination';
import { cachedStatement, numbersAsParams, param, runStatement, shapeKey, statementOf, type Statement } from '../../db/statements';
import type { RowOf } from '../../core/shape';
import { User } from './user.entity';
import { actorShape, userShape, type Actor, type UserView } from './user.types';

/** A row of the users statement: userShape's columns (user.types.ts) and, for a page, the total. */
type UserRow = RowOf<typeof userShape> & { total?: string | number };

/** What a read of users is read as: the same rows under the same filters, another select. */
export interface UserProjection<T> {
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
  map(ctx, rows) {
    const platform = ctx.reader().getPlatform();
    return rows.map((r) => userShape.view(r, platform));
  },
};

/** How a caller reads a list of users: userViewSource, or another projection of userSource (REST's JSON). */
export type UserListReader<T> = (ctx: ReadContext) => ListSource<T>;

export const userViewSource: UserListReader<UserView> = (ctx) => userSource(ctx, userViews);

/**
 * Users read as `projection`, in one statement per slice: the users under the ORM's filters
 * (softDelete: active users only) and, for the page format, their total as a subquery under the
 * same filters. Built by the ORM once per shape (db/statements.ts).
 */
export function userSource<T>(ctx: ReadContext, projection: UserProjection<T>): ListSource<T> {
  const counter = async (em: EntityManager, where: FilterQuery<object>) => {
    const qb = em.createQueryBuilder(User, 'c').count().where(where as QBFilterQuery<User>);
    await qb.applyFilters();
    return { qb };
  };
  return {
    async slice(where, { orderBy, limit, offset, withTotal }) {
      const values: unknown[] = [];
      const shape = `users ${projection.name} ${shapeKey(where, values)} ${JSON.stringify(orderBy)} ${withTotal ?? false} ${limit} ${offset !== undefined}`;
      const offsetAt = values.length;
      if (offset !== undefined) values.push(offset);
      const em = ctx.reader();
      const statement = await cachedStatement(em, shape, values, async (em) => {
        const w = numbersAsParams(where) as QBFilterQuery<User>;
        const qb = em
          .createQueryBuilder(User, 'u')
          .select(userShape.select('u'))
          .where(w)
          .orderBy(orderBy)
          .limit(limit);
        await qb.applyFilters();
        if (withTotal) qb.addSelect((await counter(em, w)).qb.as('total'));
        const users = statementOf(qb);
        // The offset after the LIMIT, as a declared parameter (the builder's offset() takes a number only).
        const inner = offset === undefined ? users : { sql: `${users.sql} offset ?`, params: [...users.params, param(offsetAt)] };
        return projection.statement(inner, orderBy, withTotal ?? false);
      });
      const rows = await runStatement<UserRow>(em, statement);
      return { rows: projection.map(ctx, rows), total: withTotal && rows.length ? Number(rows[0].total) : null };
    },
    async count(where) {
      const [{ count }] = await (await counter(ctx.em, where)).qb.execute<{ count: string }[]>('all', false);
      return Number(count);
    },
  };
}

/** One active user as `projection` reads it, or null. */
export async function userById<T>(ctx: ReadContext, projection: UserProjection<T>, id: number): Promise<T | null> {
  const [user] = (await userSource(ctx, projection).slice({ id }, { orderBy: { id: 'asc' }, limit: 1 })).rows;
  return user ?? null;
}

/** The statement of actorById, built on `em` and not run. */
function actorStatement(em: EntityManager, id: number): Promise<Statement> {
  return cachedStatement(em, 'actor by id', [id], async (em) => {
    const qb = em
      .createQueryBuilder(User, 'u')
      .select(actorShape.select('u'))
      .where({ id: param(0) } as never);
    await qb.applyFilters();
    return statementOf(qb);
  });
}

/**
 * The bearer token's user (auth.tokens.ts) as a value: the row under the users' filters
 * (softDelete: an active user only), read by a statement the ORM built once
 * (db/statements.ts). Not a managed entity: nothing changes the caller through it (a
 * change of a user goes through its own read, under a row lock), and hydrating one into the
 * request's identity map was the largest Node cost of an authenticated read after the SQL
 * (npm run bench, GET /admin/users). The password hash is not read.
 */
export async function actorById(ctx: ReadContext, id: number): Promise<Actor | null> {
  const em = ctx.reader();
  const statement = await actorStatement(em, id);
  const [row] = await runStatement<RowOf<typeof actorShape>>(em, statement);
  return row ? actorShape.view(row, em.getPlatform()) : null;
}
