import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { RequestContext } from '../core/context';
import type { TenantResolver } from '../core/tenant';
import type { TokenService } from '../modules/auth/auth.tokens';
import { buildRequestContext } from './request-context';
import { sendJsonText } from './error-handler';
import { UnreadBody } from '../core/validation';
import type { InFlight } from './in-flight';
import { allowOnly } from './chain';
import { anonymous, REST_VARY, sendNotModified, sendPublic } from './caching';
import type { Revalidation } from './revalidation';
import type { Method, Reply, RestRequest, RouteDef } from './routes';

export interface RestDeps {
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
 * Mounts RouteDefs on `router` (a Router, or the app's own router): each on its path, with the
 * JSON body parser where the method carries a body, and every other method of a known path
 * answered 405 by `allowOnly`.
 */
export function mountRoutes(router: Pick<Router, 'route'>, routes: readonly RouteDef[], deps: RestDeps): void {
  const byPath = new Map<string, RouteDef[]>();
  for (const def of routes) byPath.set(def.path, [...(byPath.get(def.path) ?? []), def]);
  for (const [path, defs] of byPath) {
    mountPath(router, path, Object.fromEntries(defs.map((def) => [def.method, [...(def.method === 'get' ? [] : [jsonBody]), restHandler(def, deps)]])));
  }
}

/** RouteDefs on a Router of their own (case-sensitive paths, a trailing slash allowed). */
export function restRouter(routes: readonly RouteDef[], deps: RestDeps): Router {
  const router = express.Router({ caseSensitive: true, strict: false });
  mountRoutes(router, routes, deps);
  return router;
}

/** Handlers by method on one path of `router`, and 405 (with Allow) for any other method. */
export function mountPath(router: Pick<Router, 'route'>, path: string, handlers: Partial<Record<Method, RequestHandler[]>>): void {
  const route = router.route(path);
  for (const [method, list] of Object.entries(handlers) as [Method, RequestHandler[]][]) route[method](...list);
  route.all(allowOnly(Object.keys(handlers)));
}

/**
 * One RouteDef as an Express handler: its context, its parsed request, its answer. Counted while
 * it runs (shutdown waits for it, InFlight); a rejection reaches the error handler through
 * Express 5's promise handling.
 */
function restHandler(def: RouteDef, deps: RestDeps): RequestHandler {
  return (req, res) =>
    deps.inFlight.run(async () => {
      const ctx = requestContext(req, res, deps);
      // Anonymous callers of a route that only reads may be served by a replica (db/replicas.ts);
      // an authenticated caller always reads from the primary, so it sees its own writes at once.
      if (def.staleReadsOk && !req.headers.authorization) ctx.readFrom = 'read';
      const publicRead = def.publicRead && anonymous(req) && ctx.tenantId === null;
      // A revalidation of a page nothing has changed since: 304 without building it (http/revalidation.ts).
      const ifNoneMatch = req.headers['if-none-match'];
      let version: string | undefined;
      if (publicRead && ifNoneMatch && deps.revalidation) {
        const known = await deps.revalidation.check(req.url, ifNoneMatch);
        if ('notModified' in known) return sendNotModified(res, known.notModified, { seconds: deps.publicCacheSeconds, vary: REST_VARY });
        version = known.version;
      }
      const reply = await def.handler(new ExpressRestRequest(req, def.method === 'get' ? undefined : bodyOf(req)), ctx);
      // A public read's 200 to an anonymous caller: ETag, public Cache-Control, 304 when unchanged.
      if (publicRead && reply.status === 200) {
        const tag = sendPublic(req, res, { contentType: JSON_TYPE, text: replyText(reply), seconds: deps.publicCacheSeconds, vary: REST_VARY });
        if (version !== undefined) deps.revalidation!.remember(req.url, tag, version);
        return;
      }
      respond(res, reply);
    });
}

/**
 * What a RouteDef sees of an Express request. The query string is parsed only when a route reads
 * it (most details and writes do not); a class, so the getter lives on the prototype and the
 * object stays a young-generation one (docs/architecture.md, per-request objects die young).
 */
class ExpressRestRequest implements RestRequest {
  readonly params: Record<string, string>;
  readonly path: string;
  constructor(
    private readonly req: Request,
    readonly body: unknown,
  ) {
    this.params = req.params as Record<string, string>;
    this.path = req.path;
  }

  header(name: string): string | undefined {
    return this.req.get(name);
  }

  private parsed: RestRequest['query'] | undefined;

  // Express 5 parses `req.query` anew on every read.
  get query(): RestRequest['query'] {
    return (this.parsed ??= this.req.query as RestRequest['query']);
  }
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** The parsed JSON body; a body sent in another content type (or none) is UnreadBody, not "no body". */
function bodyOf(req: Request): unknown {
  if (req.body !== undefined || !hasBody(req)) return req.body;
  return new UnreadBody(req.headers['content-type'] ? `content-type: ${req.headers['content-type'].split(';')[0].trim().slice(0, 100)}` : 'no content-type');
}

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * Writes a route's Reply: a value as JSON, or JSON text as it is. Not cacheable: the chain's
 * `Cache-Control: no-store` stays (public reads go through http/caching.ts sendPublic instead).
 */
export function respond(res: Response, reply: Reply): void {
  if (reply.headers) for (const name in reply.headers) res.setHeader(name, reply.headers[name]);
  sendJsonText(res, reply.status, replyText(reply));
}

const replyText = (reply: Reply): string => ('json' in reply ? reply.json : JSON.stringify(reply.body));

/**
 * The request's RequestContext, kept in `res.locals.ctx` for its log line. The client IP is
 * Express's `req.ip` (TRUST_PROXY), read only if the auth rate limits ask.
 */
export function requestContext(req: Request, res: Response, deps: RestDeps): RequestContext {
  const ctx = buildRequestContext(deps.orm, deps.tokens, {
    requestId: res.locals.requestId as string,
    ip: () => req.ip ?? req.socket.remoteAddress ?? 'unknown',
    tenantId: deps.resolveTenant(req),
    authorization: req.headers.authorization,
  });
  res.locals.ctx = ctx;
  return ctx;
}
