import express, { type Request, type Response } from 'express';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { requestFork, type RequestContext } from '../core/context';
import type { TokenService } from '../modules/auth/auth.tokens';
import type { Actor } from '../modules/user/user.types';
import type { TenantResolver } from '../core/tenant';
import type { InFlight } from './in-flight';
import type { Revalidation } from './revalidation';

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

/** What both HTTP surfaces (the REST adapter and the GraphQL endpoint) are built from. */
export interface HttpSurfaceDeps {
  orm: MikroORM;
  tokens: TokenService;
  resolveTenant: TenantResolver;
  inFlight: InFlight;
  /** PUBLIC_CACHE_SECONDS: max-age of a public read's 200 (RouteDef.publicRead). */
  publicCacheSeconds: number;
  /** 304 without building the page when nothing changed (absent with read replicas). */
  revalidation?: Revalidation;
}

/**
 * JSON bodies (1 MB at most), only on the routes that take one: mounted per route, after the
 * path and method matched, so an unknown path is a 404 and a wrong method a 405 before any body
 * is read (404 → 405 → 413 → 400). Another content type leaves `req.body` undefined.
 */
export const jsonBody = express.json({ limit: '1mb', strict: false, type: ['application/json', 'application/*+json'] });

/**
 * The request's RequestContext, kept in `res.locals.ctx` for its log line. The client IP is
 * Express's `req.ip` (TRUST_PROXY), read only if the auth rate limits ask.
 */
export function requestContext(req: Request, res: Response, deps: HttpSurfaceDeps): RequestContext {
  const ctx = buildRequestContext(deps.orm, deps.tokens, {
    requestId: res.locals.requestId as string,
    ip: () => req.ip ?? req.socket.remoteAddress ?? 'unknown',
    tenantId: deps.resolveTenant(req),
    authorization: req.headers.authorization,
  });
  res.locals.ctx = ctx;
  return ctx;
}
