import { replyJson, type RouteDef } from '../../http/routes';
import type { Services } from '../services';
import { keyedCreate } from '../idempotency/idempotency.rest';
import { jsonArrayText } from '../../http/present';
import { tenantPostJsons, writtenTenantPostJson } from './tenant-post.repository';

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
      handler: (req, ctx) =>
        keyedCreate(services.idempotency, ctx, req, (c) => svc.create(c, req.body, async (em, post) => ({ json: await writtenTenantPostJson(em, post), id: post.id })), { tenant: true }),
    },
    {
      method: 'get',
      path: '/tenant/admin/posts',
      handler: async (_req, ctx) => replyJson(jsonArrayText(await svc.listAll(ctx, tenantPostJsons))),
    },
  ];
}
