import type { EntityManager } from '@mikro-orm/postgresql';
import { jsonObjectSql } from '../../core/json-sql';
import type { JsonText } from '../../http/present';
import { written } from '../post/post.rest';
import type { TenantPost } from './tenant-post.entity';
import { tenantPostShape } from './tenant-post.types';
import { readTenantPosts, type TenantPostProjection, type TenantPostReader } from './tenant-post.service';

/**
 * A tenant post's REST answer (tenantPostShape's snake_case keys, ISO-8601 UTC timestamps), one definition built
 * by PostgreSQL as JSON text (core/json-sql.ts), read by every route that returns tenant posts:
 * the tenant's list, the admin's list of all, and the create, which reads the row back.
 */
const TENANT_POST_JSON = jsonObjectSql('x', tenantPostShape.jsonKeys);

/** Each row's answer, with its tenant for the service's ownership check. */
type TenantPostJson = JsonText & { tenantId: number };

const jsonProjection: TenantPostProjection<TenantPostJson> = {
  name: 'rest',
  statement: (inner) => ({ sql: `select x.tenant_id, ${TENANT_POST_JSON}::text as json from (${inner.sql}) x order by x.id asc`, params: inner.params }),
  map: (_em, rows) => rows.map((r) => ({ tenantId: r.tenant_id, json: (r as unknown as JsonText).json })),
};

/** Tenant posts as their REST answers. */
export const tenantPostJsons: TenantPostReader<TenantPostJson> = (em, lift) => readTenantPosts(em, jsonProjection, lift);

/** A JSON array of answers. */
export const jsonArrayText = (rows: readonly JsonText[]): string => `[${rows.map((r) => r.json).join(',')}]`;

/** One tenant post's answer, through the `tenant` filter of `em` (the request's tenant), or null. */
async function tenantPostJson(em: EntityManager, id: number): Promise<string | null> {
  const [row] = await readTenantPosts(em, jsonProjection, {}, id);
  return row?.json ?? null;
}

/** A created tenant post's answer (core/row-lock.ts ReadBack). */
export const writtenTenantPostJson = async (em: EntityManager, post: TenantPost): Promise<string> => written(await tenantPostJson(em, post.id), `tenant post ${post.id}`);
