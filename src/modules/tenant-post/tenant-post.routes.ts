import { contextOf, type RouteDef } from '../../http/routes';
import { snake } from '../../http/present';
import type { Services } from '../services';

/** REST side of tenant posts, under /tenant (CONTRACT 1); plain arrays, no pagination (CONTRACT 9). */
export function tenantPostRoutes(services: Services): RouteDef[] {
  const svc = services.tenantPosts;
  return [
    {
      method: 'get',
      path: '/tenant/posts',
      handler: async (_req, res) => {
        res.json(snake(await svc.list(contextOf(res))));
      },
    },
    {
      method: 'post',
      path: '/tenant/posts',
      handler: async (req, res) => {
        res.status(201).json(snake(await svc.create(contextOf(res), req.body)));
      },
    },
    {
      method: 'get',
      path: '/tenant/admin/posts',
      handler: async (_req, res) => {
        res.json(snake(await svc.listAll(contextOf(res))));
      },
    },
  ];
}
