import { Arg, Ctx, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import { requireTenant, type RequestContext } from '../../core/context';
import { liveHub, topics } from '../../graphql/live';
import { TenantPostService, tenantPostViews } from './tenant-post.service';
import type { Services } from '../services';
import { presentTenantPost, TenantPostType, type TenantPostView } from './tenant-post.types';

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
  createTenantPost(
    @Arg('title', () => String) title: string,
    @Arg('body', () => String) body: string,
    @Ctx() ctx: RequestContext,
  ): Promise<TenantPostView> {
    return this.services.tenantPosts.create(ctx, { title, body }, (_em, post) => presentTenantPost(post));
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
