import { contextOf, type RouteDef } from '../../http/routes';
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
      handler: async (req, res) => {
        res.status(201).json(snake(presentAuth(await auth.register(contextOf(res), req.body))));
      },
    },
    {
      method: 'post',
      path: '/auth/login',
      handler: async (req, res) => {
        res.json(snake(presentAuth(await auth.login(contextOf(res), req.body))));
      },
    },
    {
      method: 'post',
      path: '/auth/forgot-password',
      handler: async (req, res) => {
        res.json({ message: await auth.forgotPassword(contextOf(res), req.body) });
      },
    },
    {
      method: 'post',
      path: '/auth/reset-password',
      handler: async (req, res) => {
        res.json({ message: await auth.resetPassword(contextOf(res), req.body) });
      },
    },
    {
      method: 'post',
      path: '/auth/verify-email/:token',
      handler: async (req, res) => {
        res.json({ message: await auth.verifyEmail(contextOf(res), String(req.params.token)) });
      },
    },
    {
      method: 'post',
      path: '/auth/resend-verification',
      handler: async (_req, res) => {
        res.json({ message: await auth.resendVerification(contextOf(res)) });
      },
    },
    {
      method: 'get',
      path: '/auth/me',
      handler: async (_req, res) => {
        const user = await auth.me(contextOf(res));
        if (!user) throw AppError.unauthenticated();
        res.json(snake(presentUser(user)));
      },
    },
  ];
}
