import { listRequestFromQuery } from '../../core/pagination';
import { contextOf, type RouteDef } from '../../http/routes';
import { sendJsonList } from '../../http/present';
import type { Services } from '../services';
import { postJson } from '../post/post.routes';

export function trashRoutes({ trash }: Services): RouteDef[] {
  return [
    {
      method: 'get',
      path: '/trash',
      handler: async (req, res) => {
        sendJsonList(res, await trash.list(contextOf(res), () => listRequestFromQuery(req.query), req.path, 'json'));
      },
    },
    {
      method: 'delete',
      path: '/trash',
      handler: async (_req, res) => {
        res.json(await trash.purge(contextOf(res)));
      },
    },
    {
      method: 'patch',
      path: '/trash/:id/restore',
      handler: async (req, res) => {
        const ctx = contextOf(res);
        res.json(await postJson(ctx, await trash.restore(ctx, req.params.id)));
      },
    },
    {
      method: 'delete',
      path: '/trash/:id',
      handler: async (req, res) => {
        res.json(await trash.destroy(contextOf(res), req.params.id));
      },
    },
  ];
}
