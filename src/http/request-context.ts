import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { requestFork, type RequestContext } from '../core/context';
import type { TokenService } from '../modules/auth/auth.tokens';
import type { Actor } from '../modules/user/user.types';

/** What a transport knows about its caller; HTTP reads it from the request, WebSocket from connectionParams. */
export interface ContextInput {
  requestId: string;
  /** The client's address, or how to find it when first asked (only the auth rate limits ask). */
  ip: string | (() => string);
  tenantId: number | null;
  /** The `Authorization` value as sent (`Bearer <token>`), checked on first use of `actor()`. */
  authorization: string | undefined;
}

/** The one way a RequestContext is made, for every transport (HTTP, GraphQL over WebSocket). */
export function buildRequestContext(orm: MikroORM, tokens: TokenService, input: ContextInput): RequestContext {
  let em: EntityManager | undefined;
  let actor: Promise<Actor | null> | undefined;
  const ctx: RequestContext = {
    get em() {
      return (em ??= requestFork(orm, input.tenantId));
    },
    reader: () => em ?? orm.em,
    requestId: input.requestId,
    get ip() {
      return typeof input.ip === 'string' ? input.ip : (input.ip = input.ip());
    },
    tenantId: input.tenantId,
    actor: () => (actor ??= tokens.authenticate(ctx, input.authorization)),
    loaders: new Map(),
    logFields: {},
  };
  return ctx;
}
