import { filterTenantOf, requireRole, requireTenant, type RequestContext } from '../../core/context';
import type { ReadBack } from '../../core/row-lock';
import { parseInput } from '../../core/validation';
import { flushAndEmit } from '../../db/events';
import { createTenantPostInput } from './tenant-post.inputs';
import { TenantPost } from './tenant-post.entity';
import { tenantPostViews, type TenantPostReader } from './tenant-post.repository';
import { presentTenantPost, type TenantPostView } from './tenant-post.types';

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

/** Last line of defence: a row of another tenant is a bug, answered with a 500, never shown. */
function ownedBy<T extends { tenantId: number }>(post: T, tenantId: number): T {
  if (post.tenantId !== tenantId) throw new Error('Tenant filter failed: a row of another tenant was read');
  return post;
}
