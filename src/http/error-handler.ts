import type { ErrorRequestHandler, Request, Response, NextFunction } from 'express';
import { AppError, toAppError } from '../core/errors';
import type { RouteTable } from './routes';
import type { Logger } from '../core/logger';
import { redactPath } from './logging';

export function sendError(res: Response, err: AppError): void {
  if (err.retryAfter) res.setHeader('Retry-After', String(err.retryAfter));
  const body: Record<string, unknown> = { message: err.message };
  if (err.errors) body.errors = err.errors;
  res.status(err.status).json(body);
}

/** Unknown path → 404; known path, other method → 405 with Allow. Runs before the body is read. */
export function routeGuard(table: RouteTable) {
  return (req: Request, res: Response, next: NextFunction) => {
    const allowed = table.allowed(req.path);
    if (!allowed) return sendError(res, AppError.notFound('Not found'));
    if (req.method === 'OPTIONS') {
      // CORS preflights were answered before this guard; a plain OPTIONS learns the methods.
      res.setHeader('Allow', allowed.join(', '));
      return void res.status(204).end();
    }
    if (!allowed.includes(req.method)) {
      res.setHeader('Allow', allowed.join(', '));
      return sendError(res, new AppError('METHOD_NOT_ALLOWED', 'Method not allowed'));
    }
    // The router would fail to decode a parameter like `%E0%A4%A` with a bare 400 error. Such a
    // segment is no valid id or token, so the route gets `-` instead and answers as it does for
    // any invalid value (CONTRACT 7: the resource's own 404, after authentication).
    if (!decodable(req.path)) {
      req.url = req.url.replace(/^[^?]*/, (path) => path.split('/').map((seg) => (decodable(seg) ? seg : '-')).join('/'));
    }
    return next();
  };
}

function decodable(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/** The one place REST turns errors into responses: AppError as is, body-parser errors by type, the rest 500. */
export function errorHandler(log: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const type = (err as { type?: string }).type;
    let appError: AppError;
    if (type === 'entity.too.large') appError = new AppError('PAYLOAD_TOO_LARGE', 'Payload too large');
    else if (type === 'entity.parse.failed') appError = AppError.badRequest('Malformed JSON');
    else if (type === 'encoding.unsupported' || type === 'charset.unsupported') appError = AppError.badRequest('Unsupported content encoding');
    else if (type === 'request.aborted') appError = AppError.badRequest('Request aborted');
    else if (isClientHttpError(err)) appError = AppError.badRequest('Malformed request body');
    else appError = toAppError(err);
    if (appError.status >= 500) log.error({ err, path: redactPath(req.path), method: req.method, requestId: res.locals.requestId }, 'request failed');
    if (res.headersSent) return res.end();
    sendError(res, appError);
  };
}

/**
 * Other http-errors raised while reading the request (a corrupt gzip body, a length that does
 * not match): the client's fault, answered 400 without echoing the library's wording.
 */
function isClientHttpError(err: unknown): boolean {
  const e = err as { status?: unknown; statusCode?: unknown; expose?: unknown } | undefined;
  const status = e?.status ?? e?.statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 && e?.expose === true;
}
