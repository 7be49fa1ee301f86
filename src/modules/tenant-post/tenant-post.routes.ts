import { reply, replyJson, type RouteDef } from '../../http/routes';
import { snake } from '../../http/present';
import type { Services } from '../services';

/** REST side of tenant posts, under /tenant (the blog owns /posts); plain arrays, no pagination. */
export function tenantPostRoutes(services: Services): RouteDef[] {
  const svc = services.tenantPosts;
  return [
    {
      method: 'get',
      path: '/tenant/posts',
      handler: async (_req, ctx) => replyJson(`[${(await svc.list(ctx, 'json')).map((p) => p.json).join(',')}]`),
    },
    {
      method: 'post',
      path: '/tenant/posts',
      handler: async (req, ctx) => reply(snake(await svc.create(ctx, req.body)), 201),
    },
    {
      method: 'get',
      path: '/tenant/admin/posts',
      handler: async (_req, ctx) => reply(snake(await svc.listAll(ctx))),
    },
  ];
}
