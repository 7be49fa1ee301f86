import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import { requestFork, type RequestContext } from '../core/context';
import type { TenantResolver } from '../core/tenant';
import type { TokenService } from '../modules/auth/auth.tokens';
import type { User } from '../modules/user/user.entity';

/**
 * Builds the RequestContext once per request and hands it on in `res.locals.ctx`: REST handlers
 * take it from there, GraphQL from Apollo's context, and the ORM's `tenant` filter from the
 * request's fork, which carries the tenant as filter parameters (no async-hook state).
 */
export function contextMiddleware(orm: MikroORM, tokens: TokenService, resolveTenant: TenantResolver) {
  return (req: Request, res: Response, next: NextFunction) => {
    const tenantId = resolveTenant(req);
    const em = requestFork(orm, tenantId);
    let actor: Promise<User | null> | undefined;
    const ctx: RequestContext = {
      em,
      requestId: (res.getHeader('x-request-id') as string | undefined) ?? randomUUID(),
      ip: req.ip ?? req.socket.remoteAddress ?? 'unknown',
      tenantId,
      actor: () => (actor ??= tokens.authenticate(em, req.headers.authorization)),
      loaders: new Map(),
      logFields: {},
    };
    res.locals.ctx = ctx;
    next();
  };
}
