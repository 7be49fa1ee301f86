import type { TestApp } from './harness';
import { clients } from './client';

/** Header that selects a tenant under the default (header) resolver. */
export const asTenant = (tenantId: number | string) => ({ 'x-tenant-id': String(tenantId) });

let nextTenant = 1000 + Math.floor(Math.random() * 1_000_000);
/** A tenant id no other test in this file has used. */
export const freshTenant = () => nextTenant++;

/** Creates `count` posts for a tenant through the REST API, returning the created rows. */
export async function seedTenantPosts(app: TestApp, tenantId: number, count: number, prefix = `t${tenantId}`) {
  const { rest } = clients(app.url);
  const rows: TenantPostJson[] = [];
  for (let i = 0; i < count; i++) {
    const res = await rest<TenantPostJson>('POST', '/tenant/posts', { body: { title: `${prefix} post ${i}`, body: `${prefix} body ${i}` }, headers: asTenant(tenantId) });
    if (res.status !== 201) throw new Error(`seeding failed: ${res.status} ${res.text}`);
    rows.push(res.body);
  }
  return rows;
}

export interface TenantPostJson {
  id: number;
  tenant_id: number;
  title: string;
  body: string;
  created_at: string;
  updated_at: string;
}

export const TENANT_POST_FIELDS = 'id tenantId title body createdAt updatedAt';
