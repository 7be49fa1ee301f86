import { parse as parseUrl } from 'node:url';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { AppError } from '../core/errors';
import type { Logger } from '../core/logger';
import { answerError, sendError } from './error-handler';
import { logRequest, requestIdOf } from './logging';
import type { Metrics } from '../core/metrics';
import { API_HEADERS } from './security';

/**
 * The first middleware of the chain (app.ts), so no answer can miss it: the request's id, the
 * API's security headers, `Cache-Control: no-store` (public reads replace it, core/http.ts),
 * and at close its log line and metric, labelled by the Express route that answered
 * (`req.route.path`, never the raw path). A path segment that cannot be URI-decoded becomes
 * `-`, so the route answers as it does for any invalid value (the resource's own 404, after
 * authentication) rather than Express's 400 for a bad parameter.
 */
export function requestStart(o: { log: Logger; metrics: Metrics }): RequestHandler {
  return (req, res, next) => {
    stamp(o, req, res);
    const url = req.url;
    const path = pathOf(url); // throws 400 Malformed URL
    if (!decodable(path)) {
      const dashed = (p: string) => p.split('/').map((seg) => (decodable(seg) ? seg : '-')).join('/');
      req.url = url.replace(/^[^?]*/, dashed);
    }
    next();
  };
}

/**
 * What Express calls when its router could not even read the request's path (an absolute-form
 * target with an invalid host: no middleware ran), or when something escaped the chain: the
 * answer still gets its id, headers, log line and metric, and a JSON error, never Express's page.
 */
export function finalHandler(o: { log: Logger; metrics: Metrics }) {
  return (req: Request, res: Response, err?: unknown): void => {
    if (res.locals.requestId === undefined) stamp(o, req, res);
    answerError(o.log, req, res, safePath(req.originalUrl ?? req.url), res.locals.requestId as string, err ?? AppError.badRequest('Malformed URL'));
  };
}

/** Id, security headers, and at close the log line and the metric. */
function stamp(o: { log: Logger; metrics: Metrics }, req: Request, res: Response): void {
  const start = process.hrtime.bigint();
  const requestId = requestIdOf(req);
  res.locals.requestId = requestId;
  res.setHeader('x-request-id', requestId);
  for (let i = 0; i < API_HEADERS.length; i++) res.setHeader(API_HEADERS[i][0], API_HEADERS[i][1]);
  // No cache may keep an answer unless it is a public read, which says so itself (core/http.ts).
  res.setHeader('Cache-Control', 'no-store');
  // The path as it came: routing may rewrite req.url.
  const url = req.url;
  res.on('close', () => {
    const route = routeOf(req);
    o.metrics.observeHttp(req.method, route, res.statusCode, Number(process.hrtime.bigint() - start) / 1e9);
    logRequest(o.log, { requestId, method: req.method, route, path: safePath(url), start, ctx: res.locals.ctx }, res);
  });
}

/** The route pattern that answered (`/posts/:id`), or null when none matched (404). */
function routeOf(req: Request): string | null {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? path : null;
}

/** Any other method of a known path: 405 with Allow; a plain OPTIONS learns the methods (204). */
export function allowOnly(methods: string[]): RequestHandler {
  const upper = methods.map((m) => m.toUpperCase());
  if (upper.includes('GET')) upper.push('HEAD');
  const allow = [...new Set(upper)].sort().join(', ');
  return (req, res) => {
    res.setHeader('Allow', allow);
    if (req.method === 'OPTIONS') {
      res.statusCode = 204;
      return void res.end();
    }
    sendError(res, new AppError('METHOD_NOT_ALLOWED', 'Method not allowed'));
  };
}

/** The end of the chain: no route has this path. */
export const notFound: RequestHandler = (_req, res) => sendError(res, AppError.notFound('Not found'));

/** The one error handler of the REST surface (and of the operational routes): `{message}`, 5xx logged. */
export function restErrors(log: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => answerError(log, req, res, safePath(req.originalUrl), res.locals.requestId as string | undefined, err);
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
function pathOf(url: string): string {
  const q = url.indexOf('?');
  const raw = q < 0 ? url : url.slice(0, q);
  if (raw.charCodeAt(0) === 47 /* / */ && !/[#\s]/.test(raw)) return raw;
  try {
    return parseUrl(url).pathname ?? '/';
  } catch {
    throw AppError.badRequest('Malformed URL'); // an absolute-form target with an invalid host, say
  }
}

/** The path for a log line; a target that does not parse is logged as it came, up to `?`. */
function safePath(url: string): string {
  try {
    return pathOf(url);
  } catch {
    return url.replace(/\?.*$/, '');
  }
}
