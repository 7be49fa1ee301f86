import type { EntityManager } from '@mikro-orm/postgresql';
import { readContextOf, type ReadContext } from '../../core/context';
import { entityTag } from '../../core/etag';
import { jsonObjectSql } from '../../core/json-sql';
import type { ListSource } from '../../core/pagination';
import type { JsonText } from '../../http/present';
import { written } from '../post/post.rest';
import type { User } from './user.entity';
import { userById, userSource, type UserProjection } from './user.queries';
import { userShape } from './user.types';

/**
 * A user's REST answer (userShape's snake_case keys, ISO-8601 UTC timestamps, never the password), one
 * definition built by PostgreSQL as JSON text (core/json-sql.ts), read by every route that
 * returns a user as such: the admin list and the restore, which reads the row back.
 */
const USER_JSON = jsonObjectSql('x', userShape.jsonKeys);

/** The users' lists are ordered by id alone (user.service.ts); the JSON rows keep that order. */
function orderDirection(orderBy: unknown): string {
  const first = (Array.isArray(orderBy) ? orderBy[0] : orderBy) as Record<string, string> | undefined;
  if (!first || Object.keys(first).join() !== 'id') throw new Error('users JSON: only an id order is supported');
  return String(first.id).toLowerCase() === 'asc' ? ' asc' : ' desc';
}

const userJsonProjection: UserProjection<JsonText & { id: number }> = {
  name: 'rest',
  statement: (inner, orderBy, withTotal) => ({
    sql: `select x.id, ${USER_JSON}::text as json${withTotal ? ', x.total' : ''} from (${inner.sql}) x order by x.id${orderDirection(orderBy)}`,
    params: inner.params,
  }),
  map: (_ctx, rows) => rows.map((r) => ({ id: r.id, json: (r as unknown as JsonText).json })),
};

/** The admin list of users as their REST answers. */
export const userJsonSource = (ctx: ReadContext): ListSource<JsonText & { id: number }> => userSource(ctx, userJsonProjection);

/** One active user's REST answer, or null. */
export async function userJson(ctx: ReadContext, id: number): Promise<string | null> {
  return (await userById(ctx, userJsonProjection, id))?.json ?? null;
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
