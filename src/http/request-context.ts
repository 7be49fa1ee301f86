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
  return new LazyContext(orm, tokens, input);
}

/**
 * A class, not an object literal with getters: V8 builds a literal with accessors in the old
 * generation, so every request's context (and what it holds) outlived the young-generation
 * collections and was left to the full ones. Under load that was a sixth of a small read's Node
 * CPU in GC (npm run bench, GET /posts/:id). Its state is plain own properties, so a copy that
 * keeps the prototype (Apollo's `cloneObject`) works as the original does.
 */
class LazyContext implements RequestContext {
  requestId: string;
  tenantId: number | null;
  loaders = new Map<string, unknown>();
  logFields: Record<string, unknown> = {};
  readFrom?: 'read' | 'write';
  private fork: EntityManager | undefined;
  private caller: Promise<Actor | null> | undefined;

  constructor(
    private readonly orm: MikroORM,
    private readonly tokens: TokenService,
    private readonly input: ContextInput,
  ) {
    this.requestId = input.requestId;
    this.tenantId = input.tenantId;
  }

  get em(): EntityManager {
    return (this.fork ??= requestFork(this.orm, this.input.tenantId));
  }

  reader(): EntityManager {
    return this.fork ?? this.orm.em;
  }

  get ip(): string {
    const { input } = this;
    return typeof input.ip === 'string' ? input.ip : (input.ip = input.ip());
  }

  actor(): Promise<Actor | null> {
    return (this.caller ??= this.tokens.authenticate(this, this.input.authorization));
  }
}
