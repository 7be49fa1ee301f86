import { preconditionOf, reply, replyJson, replyTagged, type RouteDef } from '../../http/routes';
import { AppError } from '../../core/errors';
import type { RequestContext } from '../../core/context';
import type { Services } from '../services';
import { userJson, writtenUserJson } from '../user/user.repository';
import { MESSAGES, type AuthResult } from './auth.service';

/** The auth payload: the user's REST answer (user.repository.ts, read back after the write) and the token. */
async function authJson(ctx: RequestContext, result: AuthResult): Promise<string> {
  return `{"user":${await writtenUserJson(ctx.em, result.user)},"token":${JSON.stringify(result.token)}}`;
}

export function authRoutes(services: Services): RouteDef[] {
  const auth = services.auth;
  return [
    {
      method: 'post',
      path: '/auth/register',
      handler: async (req, ctx) => replyJson(await authJson(ctx, await auth.register(ctx, req.body)), 201),
    },
    {
      method: 'post',
      path: '/auth/login',
      handler: async (req, ctx) => replyJson(await authJson(ctx, await auth.login(ctx, req.body))),
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
        // Null too when the user was deleted since the token's check.
        const json = user && (await userJson(ctx, user.id));
        if (!json) throw AppError.unauthenticated();
        return replyTagged(json);
      },
    },
    {
      method: 'patch',
      path: '/auth/me',
      handler: async (req, ctx) => replyTagged(await auth.updateMe(ctx, req.body, preconditionOf(req, services.deps.config.requireIfMatch), writtenUserJson)),
    },
    {
      method: 'post',
      path: '/auth/change-password',
      handler: async (req, ctx) => {
        const { token } = await auth.changePassword(ctx, req.body, preconditionOf(req, services.deps.config.requireIfMatch));
        return reply({ message: MESSAGES.passwordChanged, token });
      },
    },
  ];
}
