import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestContext } from '../core/context';
import type { Logger } from '../core/logger';
import { redactPath } from '../core/redact';

/** An incoming id is kept when it looks like an id (a gateway's trace id); anything else is replaced. */
const SANE_REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * Every request's id: the caller's `x-request-id` when sane, else a UUID. It is echoed in the
 * response header, logged, and carried as RequestContext.requestId.
 */
export function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/** What the log line of one request is made of, gathered by requestStart (http/chain.ts). */
export interface RequestRecord {
  requestId: string;
  method: string | undefined;
  /** The declared route pattern, or null when no route has this path. */
  route: string | null;
  path: string;
  start: bigint;
  ctx: Pick<RequestContext, 'logFields'> | undefined;
}

/**
 * One line per request, built only from fields that cannot hold a secret: no headers, no body,
 * no query string (GraphQL GET variables could carry a password), and a path with tokens cut out.
 * Below 500 the line is at info: not built at all when the logger would drop it (LOG_LEVEL=warn).
 */
export function logRequest(log: Logger, r: RequestRecord, res: ServerResponse): void {
  if (res.statusCode < 500 && log.isLevelEnabled?.('info') === false) return;
  const line = {
    requestId: r.requestId,
    method: r.method,
    route: r.route,
    path: redactPath(r.path),
    status: res.statusCode,
    durationMs: Math.round(Number(process.hrtime.bigint() - r.start) / 1e4) / 100,
    ...r.ctx?.logFields,
    ...(res.writableFinished ? {} : { aborted: true }),
  };
  if (res.statusCode >= 500) log.warn(line, 'request');
  else log.info(line, 'request');
}
