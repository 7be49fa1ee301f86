import type { EntityManager } from '@mikro-orm/postgresql';
import { filterTenantOf, requireRole, requireTenant, type RequestContext, type TenantFilterParams } from '../../core/context';
import { flushAndEmit } from '../../core/events';
import { jsonObjectSql } from '../../core/json-sql';
import { StatementShapes } from '../../core/statement-shapes';
import { parseInput } from '../../core/validation';
import { createTenantPostInput } from './tenant-post.inputs';
import { TenantPost } from './tenant-post.entity';
import { presentTenantPost, type TenantPostView } from './tenant-post.types';

/**
 * Tenant-scoped posts (SPEC 2.4, 4.4; CONTRACT 10). Reads are limited by the entity's `tenant`
 * filter, whose tenant the request's fork carries; only `listAll` lifts it, by name.
 */
export class TenantPostService {
  /** The current tenant's posts, id ascending: views (GraphQL), or their REST answers' JSON text (`json`). */
  async list(ctx: RequestContext): Promise<TenantPostView[]>;
  async list(ctx: RequestContext, shape: 'json'): Promise<TenantPostJson[]>;
  async list(ctx: RequestContext, shape: 'view' | 'json' = 'view'): Promise<(TenantPostView | TenantPostJson)[]> {
    const tenantId = tenantScope(ctx);
    return (await readRows(ctx, shape)).map((p) => ownedBy(p, tenantId));
  }

  /**
   * Takes the raw input so that the check order (CONTRACT 5, 7) holds on both surfaces:
   * an unknown tenant is a 401 before any 422.
   */
  async create(ctx: RequestContext, raw: unknown): Promise<TenantPostView> {
    const tenantId = tenantScope(ctx);
    const input = parseInput(createTenantPostInput, raw);
    // SPEC 4.4 rule 6: the tenant is passed explicitly, never stamped by a hook or taken from input.
    const em = tenantFork(ctx, tenantId);
    const post = em.create(TenantPost, { tenantId, title: input.title, body: input.body } as TenantPost);
    await flushAndEmit(em, () => [{ type: 'tenantPostCreated', tenantId, tenantPostId: post.id }]);
    return presentTenantPost(post);
  }

  /** One post of the current tenant (what a live event names), or null. */
  async find(ctx: RequestContext, id: number): Promise<TenantPostView | null> {
    const tenantId = tenantScope(ctx);
    const post = await tenantFork(ctx, tenantId).findOne(TenantPost, { id }, { disableIdentityMap: true });
    return post ? presentTenantPost(ownedBy(post, tenantId)) : null;
  }

  /** Every tenant's posts, id ascending; admins only, no tenant needed. */
  async listAll(ctx: RequestContext): Promise<TenantPostView[]> {
    await requireRole(ctx, 'admin');
    // Plain rows, never entities in the request's identity map: a later findOne by id in the same
    // request (a sibling GraphQL field) would otherwise be answered from it without the tenant filter.
    return readRows(ctx, 'view', { tenant: false }) as Promise<TenantPostView[]>;
  }
}

/**
 * The tenant a tenant route works for, resolved before anything is read. The ORM filter reads the
 * tenant from the EntityManager's filter parameters rather than from `ctx`: should the two ever
 * differ (a context built around a fork without them: the filter would then add nothing), the
 * request fails instead of reading with the wrong condition or none.
 */
function tenantScope(ctx: RequestContext): number {
  const tenantId = requireTenant(ctx);
  // The EntityManager this request reads through: its fork, or the root one before it forks,
  // which has no parameters and no identity map to answer from (readRows gives its statements
  // the request's tenant).
  const em = ctx.reader();
  if (!em.global && filterTenantOf(em) !== tenantId) throw new Error('Tenant filter parameters do not match the request');
  return tenantId;
}

/** The request's fork, for entity reads and writes, which its `tenant` filter parameters limit. */
function tenantFork(ctx: RequestContext, tenantId: number): EntityManager {
  if (filterTenantOf(ctx.em) !== tenantId) throw new Error('Tenant filter parameters do not match the request');
  return ctx.em;
}

/** A tenant post row; timestamps as raw timestamptz text (MikroORM turns off pg's date parsing). */
interface TenantPostRow {
  id: number;
  tenant_id: number;
  title: string;
  body: string;
  created_at: string;
  updated_at: string;
  /** The REST answer (shape 'json'). */
  json?: string;
}

/** A tenant post's REST answer (CONTRACT 4) as JSON text, built by PostgreSQL; its tenant for ownedBy. */
export interface TenantPostJson {
  tenantId: number;
  json: string;
}

const TENANT_POST_JSON = jsonObjectSql('x', [
  ['id', 'int'], ['tenant_id', 'int'], ['title', 'string'], ['body', 'string'], ['created_at', 'timestamp'], ['updated_at', 'timestamp'],
]);

const shapes = new StatementShapes();

/**
 * Tenant posts, id ascending, as plain views or REST JSON text (no entity hydration, no identity map) under the ORM's
 * filters as this request's fork sets them (`tenant`, with its parameters), minus `lift`.
 * Built by the ORM once per shape (core/statement-shapes.ts): the `tenant` filter's condition is
 * compiled with a stand-in tenant, whose place then takes the tenant of this request's fork (its
 * filter parameters, as the filter itself would read them). Building the query per request was
 * most of the Node CPU of GET /tenant/posts (npm run bench).
 */
async function readRows(ctx: RequestContext, shape: 'view' | 'json', lift: Record<string, boolean> = {}): Promise<(TenantPostView | TenantPostJson)[]> {
  const em = ctx.reader();
  // Through the ORM's root EntityManager (a request that has not forked, context.ts reader) the
  // tenant is the request's, which is what its fork's filter parameters will carry; through a
  // fork, its parameters.
  const tenantId = em.global ? ctx.tenantId : filterTenantOf(em);
  const key = JSON.stringify(['tenant-posts', shape, lift, tenantId !== null]);
  const rows = await shapes.rows<TenantPostRow>(ctx, key, tenantId === null ? [] : [tenantId], async (n) => {
    const shapeEm = ctx.em.fork();
    if (tenantId !== null) shapeEm.setFilterParams('tenant', { tenantId: n(0) } satisfies TenantFilterParams);
    const qb = shapeEm
      .createQueryBuilder(TenantPost, 't')
      .select(['t.id', 't.tenantId', 't.title', 't.body', 't.createdAt', 't.updatedAt'])
      .orderBy({ id: 'asc' });
    await qb.applyFilters(lift);
    const inner = qb.getKnexQuery().toSQL();
    if (shape === 'view') return inner;
    return { sql: `select x.tenant_id, ${TENANT_POST_JSON}::text as json from (${inner.sql}) x order by x.id asc`, bindings: inner.bindings };
  });
  if (shape === 'json') return rows.map((r) => ({ tenantId: r.tenant_id, json: r.json! }));
  const platform = em.getPlatform();
  const date = (v: string) => platform.parseDate(v) as Date;
  return rows.map((r) => ({ id: r.id, tenantId: r.tenant_id, title: r.title, body: r.body, createdAt: date(r.created_at), updatedAt: date(r.updated_at) }));
}

/** Last line of defence: a row of another tenant is a bug, answered with a 500, never shown. */
function ownedBy<T extends { tenantId: number }>(post: T, tenantId: number): T {
  if (post.tenantId !== tenantId) throw new Error('Tenant filter failed: a row of another tenant was read');
  return post;
}
