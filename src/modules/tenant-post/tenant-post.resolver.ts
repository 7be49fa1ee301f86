import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../core/context';
import type { Services } from '../services';
import { TenantPostType, type TenantPostView } from './tenant-post.types';

/** GraphQL side of tenant posts; the tenant comes from the same resolver as REST (x-tenant-id). */
@Resolver()
export class TenantPostResolver {
  constructor(private readonly services: Services) {}

  @Query(() => [TenantPostType], { description: "The current tenant's posts, id ascending. Needs a tenant (x-tenant-id)." })
  tenantPosts(@Ctx() ctx: RequestContext): Promise<TenantPostView[]> {
    return this.services.tenantPosts.list(ctx);
  }

  @Query(() => [TenantPostType], { description: "Every tenant's posts, id ascending. Role admin." })
  allTenantPosts(@Ctx() ctx: RequestContext): Promise<TenantPostView[]> {
    return this.services.tenantPosts.listAll(ctx);
  }

  @Mutation(() => TenantPostType, { description: 'Creates a post for the current tenant. Needs a tenant (x-tenant-id).' })
  createTenantPost(
    @Arg('title', () => String) title: string,
    @Arg('body', () => String) body: string,
    @Ctx() ctx: RequestContext,
  ): Promise<TenantPostView> {
    return this.services.tenantPosts.create(ctx, { title, body });
  }
}
