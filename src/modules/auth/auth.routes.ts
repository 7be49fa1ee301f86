import { reply, type RouteDef } from '../../http/routes';
import { snake } from '../../http/present';
import { AppError } from '../../core/errors';
import type { Services } from '../services';
import { presentUser } from '../user/user.types';
import { presentAuth } from './auth.types';

export function authRoutes(services: Services): RouteDef[] {
  const auth = services.auth;
  return [
    {
      method: 'post',
      path: '/auth/register',
      handler: async (req, ctx) => reply(snake(presentAuth(await auth.register(ctx, req.body))), 201),
    },
    {
      method: 'post',
      path: '/auth/login',
      handler: async (req, ctx) => reply(snake(presentAuth(await auth.login(ctx, req.body)))),
    },
    {
      method: 'post',
      path: '/auth/forgot-password',
      handler: async (req, ctx) => reply({ message: await auth.forgotPassword(ctx, req.body) }),
    },
    {
      method: 'post',
      path: '/auth/reset-password',
      handler: async (req, ctx) => reply({ message: await auth.resetPassword(ctx, req.body) }),
    },
    {
      method: 'post',
      path: '/auth/verify-email/:token',
      handler: async (req, ctx) => reply({ message: await auth.verifyEmail(ctx, String(req.params.token)) }),
    },
    {
      method: 'post',
      path: '/auth/resend-verification',
      handler: async (_req, ctx) => reply({ message: await auth.resendVerification(ctx) }),
    },
    {
      method: 'get',
      path: '/auth/me',
      handler: async (_req, ctx) => {
        const user = await auth.me(ctx);
        if (!user) throw AppError.unauthenticated();
        return reply(snake(presentUser(user)));
      },
    },
  ];
}
