import type { FilterQuery, QBFilterQuery } from '@mikro-orm/postgresql';
import type { ReadContext, RequestContext } from '../../core/context';
import type { ListSource } from '../../core/pagination';
import { numbersOut, shapeKey, StatementShapes } from '../../core/statement-shapes';
import { User, type Role } from './user.entity';
import type { Actor, UserView } from './user.types';
import { jsonObjectSql } from '../../core/json-sql';

/** The users' lists are ordered by id alone (user.service.ts); the JSON rows keep that order. */
function orderDirection(orderBy: unknown): string {
  const first = (Array.isArray(orderBy) ? orderBy[0] : orderBy) as Record<string, string> | undefined;
  if (!first || Object.keys(first).join() !== 'id') throw new Error('users JSON: only an id order is supported');
  return String(first.id).toLowerCase() === 'asc' ? ' asc' : ' desc';
}

const shapes = new StatementShapes();

/** A user row; timestamps as raw timestamptz text (MikroORM turns off pg's date parsing). */
interface UserRow {
  id: number;
  name: string;
  email: string;
  role: string;
  email_verified_at: string | null;
  created_at: string;
  updated_at: string;
  total?: string | number;
  /** The REST answer (shape 'json'). */
  json?: string;
}

/** A user's REST answer (CONTRACT 4) as JSON text, built by PostgreSQL. */
export interface UserJson {
  id: number;
  json: string;
}

/** The REST keys of a user, which are its columns' names (user.types.ts presentUser, snake_cased). */
const USER_JSON = jsonObjectSql('x', [
  ['id', 'int'], ['name', 'string'], ['email', 'string'], ['role', 'string'], ['email_verified_at', 'timestamp?'], ['created_at', 'timestamp'], ['updated_at', 'timestamp'],
]);

/**
 * The admin user list read as plain views, not entities, in one statement per slice: the users
 * under the ORM's filters (softDelete: active users only) and, for the page format, their total
 * as a subquery under the same filters. Built by the ORM once per shape (core/statement-shapes.ts).
 * Shape 'json' selects each user's REST answer as JSON text instead (REST's list), from the same
 * statement.
 */
export function userViewSource(ctx: RequestContext): ListSource<UserView>;
export function userViewSource(ctx: RequestContext, shape: 'json'): ListSource<UserJson>;
export function userViewSource(ctx: RequestContext, shape: 'view' | 'json' = 'view'): ListSource<UserView | UserJson> {
  const counter = async (where: FilterQuery<object>) => {
    const qb = ctx.em.createQueryBuilder(User, 'c').count().where(where as QBFilterQuery<User>);
    await qb.applyFilters();
    return { qb };
  };
  return {
    async slice(where, { orderBy, limit, offset, withTotal }) {
      const values: number[] = [];
      const key = `users ${shape} ${shapeKey(where, values)} ${JSON.stringify(orderBy)} ${withTotal ?? false} ${offset !== undefined}`;
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
        const inner = qb.getKnexQuery().toSQL();
        if (shape === 'view') return inner;
        return { sql: `select x.id, ${USER_JSON}::text as json${withTotal ? ', x.total' : ''} from (${inner.sql}) x order by x.id${orderDirection(orderBy)}`, bindings: inner.bindings };
      });
      const total = withTotal && rows.length ? Number(rows[0].total) : null;
      if (shape === 'json') return { rows: rows.map((r) => ({ id: r.id, json: r.json! })), total };
      const platform = ctx.reader().getPlatform();
      const date = (v: string | null) => (v === null ? null : (platform.parseDate(v) as Date));
      const views = rows.map((r): UserView => ({
        id: r.id, name: r.name, email: r.email, role: r.role,
        emailVerifiedAt: date(r.email_verified_at), createdAt: date(r.created_at)!, updatedAt: date(r.updated_at)!,
      }));
      return { rows: views, total };
    },
    async count(where) {
      const [{ count }] = (await (await counter(where)).qb.execute('all', false)) as { count: string }[];
      return Number(count);
    },
  };
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
