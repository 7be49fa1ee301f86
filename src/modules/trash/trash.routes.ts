import { listRequestFromQuery } from '../../core/pagination';
import { reply, replyJson, type RouteDef } from '../../http/routes';
import { jsonListText } from '../../http/present';
import type { Services } from '../services';
import { postJsonSource, writtenPostJson } from '../post/post.repository';

export function trashRoutes({ trash }: Services): RouteDef[] {
  return [
    {
      method: 'get',
      path: '/trash',
      handler: async (req, ctx) => replyJson(jsonListText(await trash.list(ctx, () => listRequestFromQuery(req.query), req.path, postJsonSource))),
    },
    {
      method: 'delete',
      path: '/trash',
      handler: async (_req, ctx) => reply(await trash.purge(ctx)),
    },
    {
      method: 'patch',
      path: '/trash/:id/restore',
      handler: async (req, ctx) => replyJson(await trash.restore(ctx, req.params.id, writtenPostJson)),
    },
    {
      method: 'delete',
      path: '/trash/:id',
      handler: async (req, ctx) => reply(await trash.destroy(ctx, req.params.id)),
    },
  ];
}
