import type { EntityManager } from '@mikro-orm/postgresql';
import type { RowOf } from '../../core/shape';
import { jsonKeysOf, jsonObjectSql, written } from '../../db/json-sql';
import { cachedStatement, param, runStatement, statementOf, type Statement } from '../../db/statements';
import { TenantPost } from './tenant-post.entity';
import { tenantPostShape, type TenantPostView } from './tenant-post.types';

/** The tenant posts' statements, built on the request's fork (its `tenant` filter). Their SQL: tenant-post.repository.sql. */

type TenantPostRow = RowOf<typeof tenantPostShape>;

/** What a read of tenant posts is read as: the same rows under the same filters, another select. */
export interface TenantPostProjection<T> {
  /** Names the projection in the statement's cache key. */
  readonly name: string;
  /** The statement around the tenant posts statement (alias `t`, columns of TenantPostRow), id ascending. */
  statement(inner: Statement): Statement;
  map(em: EntityManager, rows: TenantPostRow[]): T[];
}

/** How a caller reads tenant posts: tenantPostViews (GraphQL), or tenantPostJsons (REST). */
export type TenantPostReader<T> = (em: EntityManager, lift?: Record<string, boolean>) => Promise<T[]>;

const viewProjection: TenantPostProjection<TenantPostView> = {
  name: 'view',
  statement: (inner) => inner,
  map: (em, rows, platform = em.getPlatform()) => rows.map((r) => tenantPostShape.view(r, platform)),
};

/** Tenant posts as plain views. */
export const tenantPostViews: TenantPostReader<TenantPostView> = (em, lift) => readTenantPosts(em, viewProjection, lift);

/**
 * Tenant posts, id ascending, as plain rows, under the ORM's filters as the request's fork sets
 * them (`tenant`, with its parameters) minus `lift`; with `id`, that one only. Cached by the key
 * rule (db/statements.ts): the fork's `tenant` parameters are part of the key, so each tenant's
 * statement is the filter's own output for that tenant (building per request was most of GET
 * /tenant/posts's Node CPU).
 */
export async function readTenantPosts<T>(em: EntityManager, projection: TenantPostProjection<T>, lift: Record<string, boolean> = {}, id?: number): Promise<T[]> {
  const shape = `tenant posts ${projection.name} ${JSON.stringify(lift)} ${id === undefined ? 'all' : 'by id'}`;
  const statement = await cachedStatement(em, shape, id === undefined ? [] : [id], async (em) => {
    const qb = em.createQueryBuilder(TenantPost, 't').select(tenantPostShape.select('t')).orderBy({ id: 'asc' });
    if (id !== undefined) qb.where({ id: param(0) } as never);
    await qb.applyFilters(lift);
    return projection.statement(statementOf(qb));
  });
  return projection.map(em, await runStatement<TenantPostRow>(em, statement));
}

/** A tenant post's REST answer, built by PostgreSQL as JSON text (db/json-sql.ts): the lists and the create's read-back. */
const TENANT_POST_JSON = jsonObjectSql('x', jsonKeysOf(tenantPostShape));

/** Each row's answer, with its tenant for the service's ownership check. */
type TenantPostJson = { json: string; tenantId: number };

const jsonProjection: TenantPostProjection<TenantPostJson> = {
  name: 'rest',
  statement: (inner) => ({ sql: `select x.tenant_id, ${TENANT_POST_JSON}::text as json from (${inner.sql}) x order by x.id asc`, params: inner.params }),
  map: (_em, rows) => rows.map((r) => ({ tenantId: r.tenant_id, json: (r as unknown as { json: string }).json })),
};

/** Tenant posts as their REST answers. */
export const tenantPostJsons: TenantPostReader<TenantPostJson> = (em, lift) => readTenantPosts(em, jsonProjection, lift);

/** A created tenant post's answer (core/row-lock.ts ReadBack), through the `tenant` filter of `em` (the request's tenant). */
export async function writtenTenantPostJson(em: EntityManager, post: TenantPost): Promise<string> {
  const [row] = await readTenantPosts(em, jsonProjection, {}, post.id);
  return written(row?.json ?? null, `tenant post ${post.id}`);
}
