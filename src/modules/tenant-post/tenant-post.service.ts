import { filterTenantOf, requireRole, requireTenant, type RequestContext } from '../../core/context';
import { flushAndEmit } from '../../core/events';
import { cachedStatement, param, runStatement, statementOf, type Statement } from '../../db/statements';
import type { ReadBack } from '../../core/row-lock';
import type { EntityManager } from '@mikro-orm/postgresql';
import { parseInput } from '../../core/validation';
import { createTenantPostInput } from './tenant-post.inputs';
import { TenantPost } from './tenant-post.entity';
import { presentTenantPost, tenantPostShape, type TenantPostView } from './tenant-post.types';
import type { RowOf } from '../../core/shape';

/**
 * Tenant-scoped posts. Reads are limited by the entity's `tenant`
 * filter, whose tenant the request's fork carries; only `listAll` lifts it, by name.
 */
export class TenantPostService {
  /** The current tenant's posts, id ascending, as `read` reads them: views (GraphQL, the default) or their REST answers. */
  async list<T extends { tenantId: number } = TenantPostView>(ctx: RequestContext, read: TenantPostReader<T> = tenantPostViews as TenantPostReader<never>): Promise<T[]> {
    const tenantId = tenantScope(ctx);
    return (await read(ctx.em)).map((p) => ownedBy(p, tenantId));
  }

  /**
   * Takes the raw input so that the check order holds on both surfaces:
   * an unknown tenant is a 401 before any 422.
   */
  async create<T>(ctx: RequestContext, raw: unknown, readBack: ReadBack<TenantPost, T>): Promise<T> {
    const tenantId = tenantScope(ctx);
    const input = parseInput(createTenantPostInput, raw);
    // The tenant is passed explicitly, never stamped by a hook or taken from input.
    const post = ctx.em.create(TenantPost, { tenantId, title: input.title, body: input.body } as TenantPost);
    await flushAndEmit(ctx.em, () => [{ type: 'tenantPostCreated', tenantId, tenantPostId: post.id }]);
    return readBack(ctx.em, post);
  }

  /** One post of the current tenant (what a live event names), or null. */
  async find(ctx: RequestContext, id: number): Promise<TenantPostView | null> {
    const tenantId = tenantScope(ctx);
    const post = await ctx.em.findOne(TenantPost, { id }, { disableIdentityMap: true });
    return post ? presentTenantPost(ownedBy(post, tenantId)) : null;
  }

  /** Every tenant's posts, id ascending; admins only, no tenant needed. */
  async listAll<T = TenantPostView>(ctx: RequestContext, read: TenantPostReader<T> = tenantPostViews as TenantPostReader<never>): Promise<T[]> {
    await requireRole(ctx, 'admin');
    // Plain rows, never entities in the request's identity map: a later findOne by id in the same
    // request (a sibling GraphQL field) would otherwise be answered from it without the tenant filter.
    return read(ctx.em, { tenant: false });
  }
}

/**
 * The tenant a tenant route works for, resolved before anything is read. The ORM filter reads the
 * tenant from the request fork's filter parameters rather than from `ctx`: should the two ever
 * differ (a context built around a fork without them: the filter would then add nothing), the
 * request fails instead of reading with the wrong condition or none.
 */
function tenantScope(ctx: RequestContext): number {
  const tenantId = requireTenant(ctx);
  if (filterTenantOf(ctx.em) !== tenantId) throw new Error('Tenant filter parameters do not match the request');
  return tenantId;
}

/** A row of the tenant posts statement: tenantPostShape's columns (tenant-post.types.ts). */
type TenantPostRow = RowOf<typeof tenantPostShape>;

/** What a read of tenant posts is read as: the same rows under the same filters, another select. */
export interface TenantPostProjection<T> {
  /** Names the projection in the statement's cache key. */
  readonly name: string;
  /** The statement around the tenant posts statement (alias `t`, columns of TenantPostRow), id ascending. */
  statement(inner: Statement): Statement;
  map(em: EntityManager, rows: TenantPostRow[]): T[];
}

/** How a caller reads tenant posts: tenantPostViews, or another projection of readTenantPosts (REST's JSON). */
export type TenantPostReader<T> = (em: EntityManager, lift?: Record<string, boolean>) => Promise<T[]>;

const viewProjection: TenantPostProjection<TenantPostView> = {
  name: 'view',
  statement: (inner) => inner,
  map(em, rows) {
    const platform = em.getPlatform();
    return rows.map((r) => tenantPostShape.view(r, platform));
  },
};

/** Tenant posts as plain views. */
export const tenantPostViews: TenantPostReader<TenantPostView> = (em, lift) => readTenantPosts(em, viewProjection, lift);

/**
 * Tenant posts, id ascending (no entity hydration, no identity map), under the ORM's filters as
 * the request's fork sets them (`tenant`, with its parameters), minus `lift`; with `id`, that one
 * post only. Cached by the one key rule (db/statements.ts): the `tenant` filter's parameters of
 * the fork are part of the key, so each tenant's statement is the filter's own output for that
 * tenant, and a request whose tenant is new builds its own. Building per request was most of
 * GET /tenant/posts's Node CPU (npm run bench).
 */
export async function readTenantPosts<T>(em: EntityManager, projection: TenantPostProjection<T>, lift: Record<string, boolean> = {}, id?: number): Promise<T[]> {
  const shape = `tenant posts ${projection.name} ${JSON.stringify(lift)} ${id === undefined ? 'all' : 'by id'}`;
  const statement = await cachedStatement(em, shape, id === undefined ? [] : [id], async (em) => {
    const qb = em
      .createQueryBuilder(TenantPost, 't')
      .select(tenantPostShape.select('t'))
      .orderBy({ id: 'asc' });
    if (id !== undefined) qb.where({ id: param(0) } as never);
    await qb.applyFilters(lift);
    return projection.statement(statementOf(qb));
  });
  return projection.map(em, await runStatement<TenantPostRow>(em, statement));
}

/** Last line of defence: a row of another tenant is a bug, answered with a 500, never shown. */
function ownedBy<T extends { tenantId: number }>(post: T, tenantId: number): T {
  if (post.tenantId !== tenantId) throw new Error('Tenant filter failed: a row of another tenant was read');
  return post;
}
