import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Request, type Response } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import { dataVersion } from '../db/list-totals';
import { buildRequestContext, type Authenticator, type RequestContext } from './context';
import { AppError, toAppError } from './errors';
import { entityTag } from './etag';
import type { InFlight } from './in-flight';
import type { TenantResolver } from './tenant';

/**
 * What both HTTP surfaces share, REST (http/) and GraphQL over HTTP (graphql/http.ts), which
 * never import each other: what they are built from, the request context of a request, JSON
 * bodies and their errors, and the caching of public reads.
 */
export interface HttpSurfaceDeps {
  orm: MikroORM;
  tokens: Authenticator;
  resolveTenant: TenantResolver;
  inFlight: InFlight;
  /** PUBLIC_CACHE_SECONDS: max-age of a public read's 200 (RouteDef.publicRead). */
  publicCacheSeconds: number;
  /** 304 without building the page when nothing changed (absent with read replicas). */
  revalidation?: Revalidation;
}

/**
 * JSON bodies (1 MB at most), only on the routes that take one: mounted per route, after the
 * path and method matched, so an unknown path is a 404 and a wrong method a 405 before any body
 * is read (404 → 405 → 413 → 400). Another content type leaves `req.body` undefined.
 */
export const jsonBody = express.json({ limit: '1mb', strict: false, type: ['application/json', 'application/*+json'] });

/**
 * The request's RequestContext, kept in `res.locals.ctx` for its log line. The client IP is
 * Express's `req.ip` (TRUST_PROXY), read only if the auth rate limits ask.
 */
export function requestContext(req: Request, res: Response, deps: HttpSurfaceDeps): RequestContext {
  const ctx = buildRequestContext(deps.orm, deps.tokens, {
    requestId: res.locals.requestId as string,
    ip: () => req.ip ?? req.socket.remoteAddress ?? 'unknown',
    tenantId: deps.resolveTenant(req),
    authorization: req.headers.authorization,
  });
  res.locals.ctx = ctx;
  return ctx;
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
 * Other http-errors raised while reading the request (a corrupt gzip body, a length that does
 * not match): the client's fault, answered 400 without echoing the library's wording.
 */
function isClientHttpError(err: unknown): boolean {
  const e = err as { status?: unknown; statusCode?: unknown; expose?: unknown } | undefined;
  const status = e?.status ?? e?.statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 && e?.expose === true;
}

/**
 * HTTP caching of public reads: `GET /posts`, `GET /posts/:id` and anonymous GraphQL queries by
 * GET. Every other answer keeps the `Cache-Control: no-store` the chain sets on every request
 * (http/chain.ts); a public read's 200 replaces it here with a strong ETag and a public
 * Cache-Control, and a request whose If-None-Match names the current tag gets 304 without a body.
 *
 * The tag is a hash of what is sent (the body, and for GraphQL its media type), computed from the
 * answer just built from the database: any change that changes the answer changes the tag, on
 * whichever surface or instance the change was made, so a revalidation never keeps a stale page.
 */

/** The value of an answer's Cache-Control: `public, max-age=N`, or `public, no-cache` for 0. */
function publicCacheControl(seconds: number): string {
  return seconds > 0 ? `public, max-age=${seconds}` : 'public, no-cache';
}

/** No Authorization and no tenant header: the answer is the same for every such caller. */
export function anonymous(req: IncomingMessage): boolean {
  return !req.headers.authorization && req.headers['x-tenant-id'] === undefined;
}

/**
 * If-None-Match against the current tag (RFC 9110 13.1.2: weak comparison, so `W/"x"` matches
 * `"x"`; `*` matches any current answer).
 */
function matches(ifNoneMatch: string | undefined, tag: string): boolean {
  if (!ifNoneMatch) return false;
  const value = ifNoneMatch.trim();
  if (value === '*') return true;
  for (const part of value.split(',')) {
    const t = part.trim();
    if ((t.startsWith('W/') ? t.slice(2) : t) === tag) return true;
  }
  return false;
}

/**
 * Writes a public read's 200, or its 304 when the client already holds it. `vary` names the
 * request headers the answer depends on besides the URL: Authorization and X-Tenant-Id always
 * (a shared cache must not hand this anonymous answer to a signed-in or tenant request), and
 * Accept where the media type follows it (GraphQL).
 */
export function sendPublic(
  req: IncomingMessage,
  res: ServerResponse,
  o: { contentType: string; text: string; seconds: number; vary: string; tag?: string },
): string {
  // `tag`: the one a route already took of this JSON text (http/routes.ts replyTagged), not hashed twice.
  const tag = o.tag ?? entityTag(o.text, o.contentType.startsWith('application/json') ? '' : o.contentType);
  if (matches(req.headers['if-none-match'], tag)) {
    sendNotModified(res, tag, o);
    return tag;
  }
  res.setHeader('ETag', tag);
  res.setHeader('Cache-Control', publicCacheControl(o.seconds));
  appendVary(res, o.vary);
  res.statusCode = 200;
  res.setHeader('Content-Type', o.contentType);
  res.setHeader('Content-Length', Buffer.byteLength(o.text));
  res.end(o.text);
  return tag;
}

/** 304 for a public read: the tag and the headers its 200 carries, no body. */
export function sendNotModified(res: ServerResponse, tag: string, o: { seconds: number; vary: string }): void {
  res.setHeader('ETag', tag);
  res.setHeader('Cache-Control', publicCacheControl(o.seconds));
  appendVary(res, o.vary);
  res.statusCode = 304;
  res.end();
}

/** Adds to Vary without dropping what CORS put there (Origin). */
function appendVary(res: ServerResponse, names: string): void {
  const prev = res.getHeader('Vary');
  res.setHeader('Vary', prev ? `${String(prev)}, ${names}` : names);
}

/** The Vary of a public REST read. */
export const REST_VARY = 'Authorization, X-Tenant-Id';
/** The Vary of a public GraphQL read: its media type follows Accept. */
export const GRAPHQL_VARY = 'Accept, Authorization, X-Tenant-Id';

/**
 * 304 without building the page, when nothing it shows has changed.
 *
 * A public read's tag is its body's hash (sendPublic, above), so a revalidation normally rebuilds
 * the page to compare. This remembers, per page (URL, and media type for GraphQL), the tag it
 * last answered and the version of the data (posts, comments, users) read just BEFORE that page
 * was built. When a revalidation finds the same version and that tag in If-None-Match, no
 * transaction committed a change since the page was built, so the page is still that tag: 304
 * after one small statement instead of the page's own.
 *
 * - Reading the version before the page is what makes it safe: a change committed in between is
 *   in the page but not in the remembered version, so the next revalidation just rebuilds.
 * - Only revalidations pay the extra statement; a full answer costs what it did.
 * - Per process, at most `max` pages (least recently answered dropped first); another instance
 *   keeps its own, so a revalidation there rebuilds once, with the same tag.
 * - Not used with read replicas: a page read on a replica may be older than the version read
 *   on the primary, and would then be taken for current.
 */
export class Revalidation {
  private readonly pages = new Map<string, { tag: string; version: string }>();

  constructor(
    private readonly orm: MikroORM,
    private readonly max = 10_000,
  ) {}

  /** The current version of the data (db/list-totals.ts: one statement on 16 rows). */
  version(): Promise<string> {
    return dataVersion(this.orm.em);
  }

  /**
   * For a revalidation of page `key`: the tag to answer 304 with, without building the page; or
   * the version to remember the page under once it is built.
   */
  async check(key: string, ifNoneMatch: string): Promise<{ notModified: string } | { version: string }> {
    const version = await this.version();
    const known = this.pages.get(key);
    if (known && known.version === version && matches(ifNoneMatch, known.tag)) return { notModified: known.tag };
    return { version };
  }

  /** The page `key` answered `tag`, built after reading `version`. */
  remember(key: string, tag: string, version: string): void {
    this.pages.delete(key);
    if (this.pages.size >= this.max) this.pages.delete(this.pages.keys().next().value!);
    this.pages.set(key, { tag, version });
  }

  get size(): number {
    return this.pages.size;
  }
}
