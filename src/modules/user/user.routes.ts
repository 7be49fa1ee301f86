import { listRequestFromQuery } from '../../core/pagination';
import { jsonListText } from '../../http/present';
import { preconditionOf, reply, replyJson, replyTagged, type RouteDef } from '../../http/routes';
import type { Services } from '../services';
import { userJsonSource, writtenUserJson } from './user.repository';

export function userRoutes(services: Services): RouteDef[] {
  const users = services.users;
  return [
    {
      method: 'get',
      path: '/admin/users',
      handler: async (req, ctx) => {
        // Role first: a non-admin gets 403 even with a bad query.
        await users.assertAdmin(ctx);
        return replyJson(jsonListText(await users.list(ctx, listRequestFromQuery(req.query), req.path, userJsonSource)));
      },
    },
    {
      method: 'delete',
      path: '/admin/users/:id',
      handler: async (req, ctx) => reply({ message: await users.softDelete(ctx, req.params.id, preconditionOf(req, services.deps.config.requireIfMatch)) }),
    },
    {
      method: 'patch',
      path: '/admin/users/:id/restore',
      handler: async (req, ctx) => replyTagged(await users.restore(ctx, req.params.id, writtenUserJson)),
    },
  ];
}
