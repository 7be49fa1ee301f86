import { AUTH_401, DB_503, operation } from './operation';
import { tenantPostExample } from './examples';
import { ref, type Paths } from './types';

const list = { type: 'array', items: ref('TenantPost') };

/** The tenant comes from `x-tenant-id`, which the gateway in front sets. */
export const tenantPaths: Paths = {
  '/tenant/posts': {
    get: operation({
      id: 'tenantPosts',
      tag: 'tenant',
      summary: "The current tenant's posts",
      description: 'A plain array (no pagination), only rows of the tenant in `x-tenant-id`.',
      params: ['TenantId'],
      success: { status: 200, description: 'Posts of this tenant', schema: list, example: [tenantPostExample] },
      errors: { 401: ['Unknown tenant'], ...DB_503 },
    }),
    post: operation({
      id: 'createTenantPost',
      tag: 'tenant',
      summary: 'Create a post for the current tenant',
      description: '`tenant_id` comes from the header, never from the body.',
      params: ['TenantId'],
      // No user is needed; one is read (and checked) only to scope an Idempotency-Key, which needs one.
      auth: 'optional',
      body: ref('TenantPostInput'),
      success: { status: 201, description: 'The created tenant post', schema: ref('TenantPost'), example: tenantPostExample },
      errors: { 401: ['Unknown tenant', 'Invalid token', 'User not found'], ...DB_503 },
      invalid: { body: { body: 'No title.' } },
      idempotent: true,
    }),
  },
  '/tenant/admin/posts': {
    get: operation({
      id: 'allTenantPosts',
      tag: 'tenant',
      summary: 'Posts of every tenant',
      description: 'Role `admin`; needs no tenant header (the tenant filter is lifted).',
      auth: true,
      success: { status: 200, description: 'Posts of all tenants', schema: list, example: [tenantPostExample, { ...tenantPostExample, id: 4, tenant_id: 2, title: 'Globex roadmap', body: 'Only tenant 2 sees this.' }] },
      errors: { 401: AUTH_401, 403: ['Forbidden'], ...DB_503 },
    }),
  },
};
