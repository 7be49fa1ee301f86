import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import { runWithContext, type RequestContext } from '../core/context';
import type { TenantResolver } from '../core/tenant';
import type { TokenService } from '../modules/auth/auth.tokens';
import type { User } from '../modules/user/user.entity';

/**
 * Builds the RequestContext once per request and runs the rest of the chain inside it
 * (AsyncLocalStorage), so REST handlers, GraphQL resolvers and ORM filters all see it.
 * Mounted after the body parser: its stream callbacks would otherwise leave the async context.
 */
export function contextMiddleware(orm: MikroORM, tokens: TokenService, resolveTenant: TenantResolver) {
  return (req: Request, res: Response, next: NextFunction) => {
    const em = orm.em.fork();
    let actor: Promise<User | null> | undefined;
    const ctx: RequestContext = {
      em,
      requestId: (res.getHeader('x-request-id') as string | undefined) ?? randomUUID(),
      ip: req.ip ?? req.socket.remoteAddress ?? 'unknown',
      tenantId: resolveTenant(req),
      actor: () => (actor ??= tokens.authenticate(em, req.headers.authorization)),
      loaders: new Map(),
    };
    res.locals.ctx = ctx;
    runWithContext(ctx, next);
  };
}
