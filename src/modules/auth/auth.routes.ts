import { requireActor } from '../../core/context';
import { contextOf, type RouteDef } from '../../http/routes';
import { snake } from '../../http/present';
import type { Services } from '../services';
import { presentUser } from '../user/user.types';

export function authRoutes(_services: Services): RouteDef[] {
  return [
    {
      method: 'get',
      path: '/auth/me',
      handler: async (_req, res) => {
        const user = await requireActor(contextOf(res));
        res.json(snake(presentUser(user)));
      },
    },
  ];
}
