import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { RequestContext } from '../core/context';
import type { Logger } from '../core/logger';
import type { RouteTable } from './routes';

/** An incoming id is kept when it looks like an id (a gateway's trace id); anything else is replaced. */
const SANE_REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * Gives every request an id: the caller's `x-request-id` when sane, else a UUID. It is echoed in
 * the response header, logged, and read by the context middleware into RequestContext.requestId.
 */
export function requestId() {
  return (req: Request, res: Response, next: NextFunction) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = id;
    res.setHeader('x-request-id', id);
    next();
  };
}

/** Path segments that carry secrets: the verify-email token (CONTRACT 6: logs never show it). */
const SECRET_SEGMENTS: RegExp[] = [/^(\/auth\/verify-email\/)[^/]+/i, /^(\/auth\/reset-password\/)[^/]+/i];

export function redactPath(path: string): string {
  for (const re of SECRET_SEGMENTS) if (re.test(path)) return path.replace(re, '$1[REDACTED]');
  return path;
}

/** Fields a later layer adds to the request's log line (the GraphQL operation), on its context. */
export function addLogFields(ctx: Pick<RequestContext, 'logFields'>, fields: Record<string, unknown>): void {
  if (ctx.logFields) Object.assign(ctx.logFields, fields);
}

/**
 * One line per request, built only from fields that cannot hold a secret: no headers, no body,
 * no query string (GraphQL GET variables could carry a password), and a path with tokens cut out.
 */
export function requestLogger(log: Logger, table: RouteTable) {
  return (req: Request, res: Response, next: NextFunction) => {
    const start = process.hrtime.bigint();
    // Read now: the /graphql mount rewrites req.url to "/" and never puts it back once Apollo has
    // answered (so at 'close' req.path says "/"), and the GraphQL guard turns HEAD into GET.
    const { method, path } = req;
    res.once('close', () => {
      // Below 500 the line is at info: not built at all when the logger would drop it (LOG_LEVEL=warn).
      if (res.statusCode < 500 && log.isLevelEnabled?.('info') === false) return;
      const ctx = res.locals.ctx as RequestContext | undefined;
      const line = {
        requestId: res.locals.requestId as string | undefined,
        method,
        route: table.match(path),
        path: redactPath(path),
        status: res.statusCode,
        durationMs: Math.round(Number(process.hrtime.bigint() - start) / 1e4) / 100,
        ...ctx?.logFields,
        ...(res.writableFinished ? {} : { aborted: true }),
      };
      if (res.statusCode >= 500) log.warn(line, 'request');
      else log.info(line, 'request');
    });
    next();
  };
}
