import { replyJson, type RouteDef } from '../../http/routes';
import type { Services } from '../services';
import { jsonArrayText, tenantPostJsons, writtenTenantPostJson } from './tenant-post.rest';

/** REST side of tenant posts, under /tenant (the blog owns /posts); plain arrays, no pagination. */
export function tenantPostRoutes(services: Services): RouteDef[] {
  const svc = services.tenantPosts;
  return [
    {
      method: 'get',
      path: '/tenant/posts',
      handler: async (_req, ctx) => replyJson(jsonArrayText(await svc.list(ctx, tenantPostJsons))),
    },
    {
      method: 'post',
      path: '/tenant/posts',
      handler: async (req, ctx) => replyJson(await svc.create(ctx, req.body, writtenTenantPostJson), 201),
    },
    {
      method: 'get',
      path: '/tenant/admin/posts',
      handler: async (_req, ctx) => replyJson(jsonArrayText(await svc.listAll(ctx, tenantPostJsons))),
    },
  ];
}
