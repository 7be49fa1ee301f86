import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { parse as parseUrl } from 'node:url';
import { AppError } from '../core/errors';
import type { Logger } from '../core/logger';
import { answerError, sendError } from './error-handler';
import { logRequest, requestIdOf } from './logging';
import type { Metrics } from './metrics';
import type { Routed } from './rest';
import type { RouteTable } from './routes';
import { API_HEADERS, corsPolicy } from './security';

export interface FrontOptions {
  table: RouteTable;
  log: Logger;
  metrics: Metrics;
  corsOrigins: readonly string[];
  /** The adapters on node:http, asked in turn (REST: http/rest.ts; GraphQL: graphql/http.ts): true when one took the request. */
  adapters: ((req: IncomingMessage, res: ServerResponse, routed: Routed) => boolean)[];
  /** Everything else (health, metrics, documentation, GraphiQL): Express. */
  others: RequestListener;
}

/**
 * The service's one request listener. Every request, whichever surface answers it, gets here
 * first: an id, the security headers, its log line and its metric, CORS, and 404/405 from the
 * route table before any body is read. Then the REST and GraphQL adapters take their requests,
 * and Express the rest. Nothing below this point repeats these steps, so no route can miss them.
 */
export function createFront(o: FrontOptions): RequestListener {
  const cors = corsPolicy(o.corsOrigins);
  return (req, res) => {
    try {
      handle(req, res);
    } catch (err) {
      // Nothing thrown here may reach the server's 'request' event: it would end the process.
      answerError(o.log, req, res, req.url ?? '', res.getHeader('x-request-id') as string | undefined, err);
    }
  };

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const start = process.hrtime.bigint();
    const requestId = requestIdOf(req);
    res.setHeader('x-request-id', requestId);
    for (let i = 0; i < API_HEADERS.length; i++) res.setHeader(API_HEADERS[i][0], API_HEADERS[i][1]);
    // Read now: the guard below may rewrite req.url, and the line logs the path as it came.
    const path = pathOf(req.url ?? '/');
    const routed: Routed = { requestId, path, ctx: undefined };
    const { route, allowed } = o.table.lookup(path);
    // A response closes once.
    res.on('close', () => {
      o.metrics.observeHttp(req.method ?? 'GET', route, res.statusCode, Number(process.hrtime.bigint() - start) / 1e9);
      logRequest(o.log, { requestId, method: req.method, route, path, start, ctx: routed.ctx }, res);
    });
    cors(req, res, () => {
      if (guard(allowed, req, res, routed)) return;
      for (const adapter of o.adapters) if (adapter(req, res, routed)) return;
      // Express's error handler reads the id from res.locals.
      (res as ServerResponse & { locals: object }).locals = { requestId };
      o.others(req, res);
    });
  }
}

/**
 * Unknown path → 404; known path, other method → 405 with Allow; a plain OPTIONS learns the
 * methods (CORS preflights were answered before). True when it answered.
 */
function guard(allowed: string[] | null, req: IncomingMessage, res: ServerResponse, routed: Routed): boolean {
  if (!allowed) return sendError(res, AppError.notFound('Not found')), true;
  if (req.method === 'OPTIONS') {
    res.setHeader('Allow', allowed.join(', '));
    res.statusCode = 204;
    return res.end(), true;
  }
  if (!allowed.includes(req.method ?? '')) {
    res.setHeader('Allow', allowed.join(', '));
    return sendError(res, new AppError('METHOD_NOT_ALLOWED', 'Method not allowed')), true;
  }
  // A parameter like `%E0%A4%A` cannot be decoded. Such a segment is no valid id or token, so the
  // route gets `-` instead and answers as it does for any invalid value (CONTRACT 7: the
  // resource's own 404, after authentication).
  if (!decodable(routed.path)) {
    const dashed = (p: string) => p.split('/').map((seg) => (decodable(seg) ? seg : '-')).join('/');
    routed.path = dashed(routed.path);
    req.url = req.url!.replace(/^[^?]*/, dashed);
  }
  return false;
}

function decodable(path: string): boolean {
  if (!path.includes('%')) return true;
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The path of a request target, as Express reads `req.path`: up to `?` for the usual
 * `/path?query`; anything else (an absolute-form target, a `#`) through the URL parser.
 */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  const raw = q < 0 ? url : url.slice(0, q);
  if (raw.charCodeAt(0) === 47 /* / */ && !/[#\s]/.test(raw)) return raw;
  try {
    return parseUrl(url).pathname ?? '/';
  } catch {
    throw AppError.badRequest('Malformed URL'); // an absolute-form target with an invalid host, say
  }
}
