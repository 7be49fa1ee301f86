import type { IncomingMessage, ServerResponse } from 'node:http';
import { entityTag } from '../core/etag';

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
export function matches(ifNoneMatch: string | undefined, tag: string): boolean {
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
