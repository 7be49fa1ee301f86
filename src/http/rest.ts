import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import express, { type Express } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { RequestContext } from '../core/context';
import type { Logger } from '../core/logger';
import type { TenantResolver } from '../core/tenant';
import type { TokenService } from '../modules/auth/auth.tokens';
import { buildRequestContext } from './request-context';
import { answerError, sendJsonText } from './error-handler';
import { expressView, type RequestView } from './express-view';
import type { InFlight } from './in-flight';
import { routePattern, segmentCount, type RestRequest, type RouteDef } from './routes';

export interface RestDeps {
  orm: MikroORM;
  tokens: TokenService;
  resolveTenant: TenantResolver;
  inFlight: InFlight;
  log: Logger;
  /** Express, for its reading of `req.ip` and `req.hostname` under TRUST_PROXY (http/express-view.ts). */
  app: Express;
}

/** What the front (http/front.ts) knows of a request when it hands it on. */
export interface Routed {
  requestId: string;
  path: string;
  /** Set here once built, for the request's log line. */
  ctx: RequestContext | undefined;
}

/**
 * The REST adapter: routes a request to its RouteDef, parses what the route needs (the JSON body
 * of a write, the query, the decoded parameters), builds its RequestContext, runs the handler
 * and writes its Reply; every error goes through answerError. Plain node:http, no Express: on a
 * small answer Express's per-request work (prototype swaps, the router's layer walk, res.json)
 * cost more CPU than the SQL did (docs/performance.md).
 */
export function restRouter(routes: readonly RouteDef[], deps: RestDeps) {
  const compiled = routes.map((def) => ({
    def,
    method: def.method.toUpperCase(),
    pattern: routePattern(def.path),
    names: def.path.split('/').filter((s) => s.startsWith(':')).map((s) => s.slice(1)),
  }));
  // Candidates by method and segment count, in declaration order: a request tests a few patterns.
  const candidates = new Map<string, typeof compiled>();
  for (const route of compiled) {
    const key = `${route.method} ${segmentCount(route.def.path)}`;
    candidates.set(key, [...(candidates.get(key) ?? []), route]);
  }

  async function run(route: (typeof compiled)[number], match: RegExpExecArray, req: IncomingMessage, res: ServerResponse, routed: Routed): Promise<void> {
    const body = route.method === 'GET' ? undefined : await readJsonBody(req, res);
    const ctx = requestContext(req, routed, deps);
    // Anonymous callers of a route that only reads may be served by a replica (db/replicas.ts);
    // an authenticated caller always reads from the primary, so it sees its own writes at once.
    if (route.def.staleReadsOk && !req.headers.authorization) ctx.readFrom = 'read';
    const params: Record<string, string> = {};
    for (let i = 0; i < route.names.length; i++) params[route.names[i]] = decodeURIComponent(match[i + 1]);
    const request: RestRequest = { params, query: parseQuery(queryOf(req.url ?? '')), body, path: routed.path };
    const reply = await route.def.handler(request, ctx);
    sendJsonText(res, reply.status, 'json' in reply ? reply.json : JSON.stringify(reply.body));
  }

  return {
    /** Handles the request when a REST route takes it (true); false leaves it to the caller. */
    dispatch(req: IncomingMessage, res: ServerResponse, routed: Routed): boolean {
      // HEAD is answered as GET; Node leaves the body out.
      const method = req.method === 'HEAD' ? 'GET' : req.method;
      for (const route of candidates.get(`${method} ${segmentCount(routed.path)}`) ?? []) {
        const match = route.pattern.exec(routed.path);
        if (!match) continue;
        serve(deps, req, res, routed, () => run(route, match, req, res, routed));
        return true;
      }
      return false;
    },
  };
}

/**
 * Runs an adapter's work for one request (REST here, GraphQL in graphql/http.ts): counted for
 * the whole run, so shutdown waits for it (InFlight), and anything it throws answered once,
 * through answerError.
 */
export function serve(deps: Pick<RestDeps, 'inFlight' | 'log'>, req: IncomingMessage, res: ServerResponse, routed: Routed, work: () => Promise<void>): void {
  void deps.inFlight.run(async () => {
    try {
      await work();
    } catch (err) {
      answerError(deps.log, req, res, routed.path, routed.requestId, err);
    }
  });
}

const parseJson = express.json({ limit: '1mb', strict: false, type: ['application/json', 'application/*+json'] });

/** The JSON body of a request (1 MB at most; undefined for another content type), as Express reads it. */
export function readJsonBody(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  return new Promise<unknown>((resolve, reject) => {
    parseJson(req as never, res as never, (err?: unknown) => (err ? reject(err) : resolve((req as { body?: unknown }).body)));
  });
}

/**
 * The request's RequestContext, kept on `routed` for its log line. Express's reading of the
 * request (TRUST_PROXY: client IP, hostname) is made only if the tenant resolver or the client IP
 * asks for it: most requests need neither.
 */
export function requestContext(req: IncomingMessage, routed: Routed, deps: RestDeps): RequestContext {
  const reading = new ExpressReading(deps.app, req);
  routed.ctx = buildRequestContext(deps.orm, deps.tokens, {
    requestId: routed.requestId,
    ip: () => reading.view().ip ?? req.socket.remoteAddress ?? 'unknown',
    tenantId: deps.resolveTenant(reading),
    authorization: req.headers.authorization,
  });
  return routed.ctx;
}

/**
 * What the tenant resolver reads of a request, with Express's reading made on first use. A class
 * for the same reason as the request context's (http/request-context.ts): an object literal with
 * a getter would be built in the old generation on every request.
 */
class ExpressReading {
  readonly headers: IncomingMessage['headers'];
  private reading: RequestView | undefined;

  constructor(
    private readonly app: Express,
    private readonly req: IncomingMessage,
  ) {
    this.headers = req.headers;
  }

  view(): RequestView {
    return (this.reading ??= expressView(this.app, this.req));
  }

  get hostname(): string | undefined {
    return this.view().hostname;
  }
}

/** The query string of a request target (after `?`, before any `#`). */
export function queryOf(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return '';
  const hash = url.indexOf('#', q);
  return hash < 0 ? url.slice(q + 1) : url.slice(q + 1, hash);
}
