import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppError } from '../core/errors';
import { restError } from '../core/http';
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
