import { listRequestFromQuery } from '../../core/pagination';
import { snake, snakeList } from '../../http/present';
import { contextOf, type RouteDef } from '../../http/routes';
import type { Services } from '../services';
import { presentUser } from './user.types';

export function userRoutes(services: Services): RouteDef[] {
  const users = services.users;
  return [
    {
      method: 'get',
      path: '/admin/users',
      handler: async (req, res) => {
        const ctx = contextOf(res);
        // Role first: a non-admin gets 403 even with a bad query.
        await users.assertAdmin(ctx);
        const result = await users.list(ctx, listRequestFromQuery(req.query), req.path);
        res.json(snakeList(result));
      },
    },
    {
      method: 'delete',
      path: '/admin/users/:id',
      handler: async (req, res) => {
        res.json({ message: await users.softDelete(contextOf(res), req.params.id) });
      },
    },
    {
      method: 'patch',
      path: '/admin/users/:id/restore',
      handler: async (req, res) => {
        res.json(snake(presentUser(await users.restore(contextOf(res), req.params.id))));
      },
    },
  ];
}
