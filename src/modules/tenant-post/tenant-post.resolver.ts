import { Arg, Ctx, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import { requireTenant, type RequestContext } from '../../core/context';
import { liveHub, topics } from '../../graphql/live';
import { TenantPostService } from './tenant-post.service';
import { tenantPostViews } from './tenant-post.repository';
import type { Services } from '../services';
import { IDEMPOTENCY_KEY_ARG } from '../idempotency/idempotency.types';
import { TenantPostType } from './tenant-post.graphql';
import { presentTenantPost, type TenantPostView } from './tenant-post.types';

/** GraphQL side of tenant posts; the tenant comes from the same resolver as REST (x-tenant-id). */
@Resolver()
export class TenantPostResolver {
  constructor(private readonly services: Services) {}

  @Query(() => [TenantPostType], { description: "The current tenant's posts, id ascending. Needs a tenant (x-tenant-id)." })
  tenantPosts(@Ctx() ctx: RequestContext): Promise<TenantPostView[]> {
    return this.services.tenantPosts.list(ctx, tenantPostViews);
  }

  @Query(() => [TenantPostType], { description: "Every tenant's posts, id ascending. Role admin." })
  allTenantPosts(@Ctx() ctx: RequestContext): Promise<TenantPostView[]> {
    return this.services.tenantPosts.listAll(ctx, tenantPostViews);
  }

  @Mutation(() => TenantPostType, { description: 'Creates a post for the current tenant. Needs a tenant (x-tenant-id).' })
  async createTenantPost(
    @Arg('title', () => String) title: string,
    @Arg('body', () => String) body: string,
    @Ctx() ctx: RequestContext,
    @Arg('idempotencyKey', () => String, { nullable: true, description: IDEMPOTENCY_KEY_ARG }) idempotencyKey?: string | null,
  ): Promise<TenantPostView> {
    const { tenantPosts, idempotency } = this.services;
    const request = await idempotency.prepare(ctx, { key: idempotencyKey, field: 'idempotencyKey', method: 'GRAPHQL', path: 'createTenantPost', body: { title, body }, tenant: true });
    const out = await idempotency.run(ctx, request, async (c) => {
      const post = await tenantPosts.create(c, { title, body }, (_em, created) => presentTenantPost(created));
      return { status: 200, body: null, resourceId: post.id, value: post };
    });
    if (!out.replayed) return out.value;
    const post = await tenantPosts.find(ctx, out.resourceId);
    if (!post) throw new Error(`tenant post ${out.resourceId} of a stored Idempotency-Key is gone`);
    return post;
  }

  @Subscription(() => TenantPostType, {
    description: "A post was created for the connection's tenant (connectionParams.tenantId). Needs a tenant.",
    subscribe: ({ context }) => {
      const tenantId = requireTenant(context);
      return liveHub(context).subscribe({
        topic: topics.tenantPostCreated(tenantId),
        field: 'tenantPostCreated',
        tenantId,
        load: (ctx, e) => (e.type === 'tenantPostCreated' && e.tenantId === tenantId ? reader.find(ctx, e.tenantPostId) : Promise.resolve(null)),
      });
    },
  })
  tenantPostCreated(@Root() post: TenantPostView): TenantPostView {
    return post;
  }
}

/** Stateless: the subscription's load reads through it as the tenantPosts query does. */
const reader = new TenantPostService();
