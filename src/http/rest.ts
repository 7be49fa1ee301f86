import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { anonymous, jsonBody, REST_VARY, requestContext, sendNotModified, sendPublic, type HttpSurfaceDeps } from '../core/http';
import { sendJsonText } from './error-handler';
import { UnreadBody } from '../core/validation';
import { allowOnly } from './chain';
import type { Method, Reply, RestRequest, RouteDef } from './routes';

/** What the REST adapter needs: the same as the GraphQL endpoint (core/http.ts). */
export type RestDeps = HttpSurfaceDeps;


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
      // A revalidation of a page nothing has changed since: 304 without building it (core/http.ts Revalidation).
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
        const tag = sendPublic(req, res, { contentType: JSON_TYPE, text: replyText(reply), seconds: deps.publicCacheSeconds, vary: REST_VARY, tag: 'etag' in reply ? reply.etag : undefined });
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
 * `Cache-Control: no-store` stays (public reads go through core/http.ts sendPublic instead).
 */
function respond(res: Response, reply: Reply): void {
  if (reply.headers) for (const name in reply.headers) res.setHeader(name, reply.headers[name]);
  if ('etag' in reply && reply.etag) res.setHeader('ETag', reply.etag);
  // 204 carries no body at all (RFC 9110).
  if (reply.status === 204) return void res.status(204).end();
  sendJsonText(res, reply.status, replyText(reply));
}

const replyText = (reply: Reply): string => ('json' in reply ? reply.json : JSON.stringify(reply.body));
