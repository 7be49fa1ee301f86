import type { FilterQuery, QBFilterQuery, QueryBuilder, QueryOrderMap } from '@mikro-orm/postgresql';
import type { ReadContext } from '../../core/context';
import type { ListSource } from '../../core/pagination';
import { numbersOut, shapeKey, StatementShapes, type CompiledStatement } from '../../core/statement-shapes';
import { User, type Role } from './user.entity';
import type { Actor, UserView } from './user.types';

const shapes = new StatementShapes();

/** A user row; timestamps as raw timestamptz text (MikroORM turns off pg's date parsing). */
export interface UserRow {
  id: number;
  name: string;
  email: string;
  role: string;
  email_verified_at: string | null;
  created_at: string;
  updated_at: string;
  total?: string | number;
}

/** What a read of users is read as: the same rows under the same filters, another select. */
export interface UserProjection<T> {
  /** Names the projection in the statement's cache key. */
  readonly name: string;
  /** The statement around the users statement `qb` (alias `u`, columns of UserRow), rows in the order `orderBy`. */
  statement(qb: QueryBuilder<User>, orderBy: QueryOrderMap<object>[] | QueryOrderMap<object>, withTotal: boolean): CompiledStatement;
  map(ctx: ReadContext, rows: UserRow[]): T[];
}

/** Users as plain views, not entities. */
export const userViews: UserProjection<UserView> = {
  name: 'view',
  statement: (qb) => qb.getKnexQuery().toSQL(),
  map(ctx, rows) {
    const platform = ctx.reader().getPlatform();
    const date = (v: string | null) => (v === null ? null : (platform.parseDate(v) as Date));
    return rows.map((r): UserView => ({
      id: r.id, name: r.name, email: r.email, role: r.role,
      emailVerifiedAt: date(r.email_verified_at), createdAt: date(r.created_at)!, updatedAt: date(r.updated_at)!,
    }));
  },
};

/** How a caller reads a list of users: userViewSource, or another projection of userSource (REST's JSON). */
export type UserListReader<T> = (ctx: ReadContext) => ListSource<T>;

export const userViewSource: UserListReader<UserView> = (ctx) => userSource(ctx, userViews);

/**
 * Users read as `projection`, in one statement per slice: the users under the ORM's filters
 * (softDelete: active users only) and, for the page format, their total as a subquery under the
 * same filters. Built by the ORM once per shape (core/statement-shapes.ts).
 */
export function userSource<T>(ctx: ReadContext, projection: UserProjection<T>): ListSource<T> {
  const counter = async (where: FilterQuery<object>) => {
    const qb = ctx.em.createQueryBuilder(User, 'c').count().where(where as QBFilterQuery<User>);
    await qb.applyFilters();
    return { qb };
  };
  return {
    async slice(where, { orderBy, limit, offset, withTotal }) {
      const values: number[] = [];
      const key = `users ${projection.name} ${shapeKey(where, values)} ${JSON.stringify(orderBy)} ${withTotal ?? false} ${offset !== undefined}`;
      const at = values.length;
      values.push(limit, offset ?? 0);
      const rows = await shapes.rows<UserRow>(ctx, key, values, async (n) => {
        const w = numbersOut(where, [], n) as QBFilterQuery<User>;
        const qb = ctx.em
          .createQueryBuilder(User, 'u')
          .select(['u.id', 'u.name', 'u.email', 'u.role', 'u.emailVerifiedAt', 'u.createdAt', 'u.updatedAt'])
          .where(w)
          .orderBy(orderBy as never)
          .limit(n(at), offset === undefined ? undefined : n(at + 1));
        await qb.applyFilters();
        if (withTotal) qb.addSelect((await counter(w)).qb.as('total'));
        return projection.statement(qb, orderBy, withTotal ?? false);
      });
      return { rows: projection.map(ctx, rows), total: withTotal && rows.length ? Number(rows[0].total) : null };
    },
    async count(where) {
      const [{ count }] = (await (await counter(where)).qb.execute('all', false)) as { count: string }[];
      return Number(count);
    },
  };
}

/** One active user as `projection` reads it, or null. */
export async function userById<T>(ctx: ReadContext, projection: UserProjection<T>, id: number): Promise<T | null> {
  const [user] = (await userSource(ctx, projection).slice({ id }, { orderBy: { id: 'asc' }, limit: 1 })).rows;
  return user ?? null;
}

/**
 * The bearer token's user (auth.tokens.ts) as a value: the row under the users' filters
 * (softDelete: an active user only), read by a statement the ORM built once
 * (core/statement-shapes.ts). Not a managed entity: nothing changes the caller through it (a
 * change of a user goes through its own read, under a row lock), and hydrating one into the
 * request's identity map was the largest Node cost of an authenticated read after the SQL
 * (npm run bench, GET /admin/users). The password hash is not read.
 */
export async function actorById(ctx: ReadContext, id: number): Promise<Actor | null> {
  const [row] = await shapes.rows<UserRow & { token_version: number }>(ctx, '["actor-by-id"]', [id], async (n) => {
    const qb = ctx.em
      .createQueryBuilder(User, 'u')
      .select(['u.id', 'u.name', 'u.email', 'u.role', 'u.emailVerifiedAt', 'u.createdAt', 'u.updatedAt', 'u.tokenVersion'])
      .where({ id: n(0) });
    await qb.applyFilters();
    return qb.getKnexQuery().toSQL();
  });
  if (!row) return null;
  const platform = ctx.reader().getPlatform();
  const date = (v: string) => platform.parseDate(v) as Date;
  return {
    id: row.id, name: row.name, email: row.email, role: row.role as Role, tokenVersion: row.token_version,
    emailVerifiedAt: row.email_verified_at === null ? null : date(row.email_verified_at), createdAt: date(row.created_at), updatedAt: date(row.updated_at),
  };
}
