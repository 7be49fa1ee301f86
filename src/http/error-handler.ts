import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError, toAppError } from '../core/errors';
import type { Logger } from '../core/logger';
import { redactPath } from '../core/redact';

/** Writes an error answer; any ServerResponse (Express's is one). */
export function sendError(res: ServerResponse, err: AppError): void {
  if (err.retryAfter) res.setHeader('Retry-After', String(err.retryAfter));
  if (err.etag) res.setHeader('ETag', err.etag);
  const body: Record<string, unknown> = { message: err.message };
  if (err.errors) body.errors = err.errors;
  sendJsonText(res, err.status, JSON.stringify(body));
}

/** JSON text with its status, type and length: every REST answer and error goes out here. */
export function sendJsonText(res: ServerResponse, status: number, json: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(json));
  res.end(json);
}

/** AppError as is, the body parser's errors by type, anything else through toAppError (500 unless known). */
export function restError(err: unknown): AppError {
  const type = (err as { type?: string } | undefined)?.type;
  if (type === 'entity.too.large') return new AppError('PAYLOAD_TOO_LARGE', 'Payload too large');
  if (type === 'entity.parse.failed') return AppError.badRequest('Malformed JSON');
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') return AppError.badRequest('Unsupported content encoding');
  if (type === 'request.aborted') return AppError.badRequest('Request aborted');
  if (isClientHttpError(err)) return AppError.badRequest('Malformed request body');
  return toAppError(err);
}

/**
 * The one place REST turns errors into responses (http/rest.ts for routes, the Express tail for
 * GraphQL and the documentation): 5xx are logged, then answered unless the answer has started.
 */
export function answerError(log: Logger, req: IncomingMessage, res: ServerResponse, path: string, requestId: string | undefined, err: unknown): void {
  const appError = restError(err);
  if (appError.status >= 500) log.error({ err, path: redactPath(path), method: req.method, requestId }, 'request failed');
  if (res.headersSent) return void res.end();
  sendError(res, appError);
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
