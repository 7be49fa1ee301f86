import type { IncomingMessage } from 'node:http';
import type { Express } from 'express';

/** What a tenant resolver or a rate limit may read of a request. */
export interface RequestView {
  headers: IncomingMessage['headers'];
  /** As Express reads them: X-Forwarded-* only from the hops TRUST_PROXY trusts. */
  readonly ip?: string;
  readonly hostname?: string;
  /** Express's content negotiation on `Accept`: the first of `types` it accepts, or false. */
  accepts(types: string[]): string | false;
}

/**
 * Express's own reading of `req.ip` and `req.hostname` for a request Express does not route
 * (REST routes, WebSocket upgrades): a view inheriting Express's request getters, so the one
 * TRUST_PROXY setting means the same everywhere. The request itself is not touched (turning it
 * into an Express request changes its prototype, which is what made Express costly per request).
 */
export function expressView(app: Express, req: IncomingMessage): RequestView {
  const view = Object.create(app.request) as { headers: unknown; socket: unknown; connection: unknown; url?: string; method?: string };
  view.headers = req.headers;
  view.socket = req.socket;
  view.connection = req.socket;
  view.url = req.url;
  view.method = req.method;
  return view as unknown as RequestView;
}

/** The client IP exactly as Express computes `req.ip` (TRUST_PROXY). */
export function clientIp(app: Express, req: IncomingMessage): string {
  return expressView(app, req).ip ?? req.socket.remoteAddress ?? 'unknown';
}
