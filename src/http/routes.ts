import type { RequestContext } from '../core/context';
import { entityTag, precondition, type Precondition } from '../core/etag';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** What a REST route sees of its request: already routed, decoded and (for writes) parsed. */
export interface RestRequest {
  /** The route's `:name` segments, URI-decoded. */
  params: Record<string, string>;
  /** The query string as Node's querystring parses it (a repeated key gives an array). */
  query: Record<string, string | string[] | undefined>;
  /** The parsed JSON body of a write; undefined for GET/HEAD and for other content types. */
  body: unknown;
  /** The request's path, without the query string (pagination links are built from it). */
  path: string;
  /** A request header's value (name case-insensitive); undefined when absent. */
  header(name: string): string | undefined;
}

/**
 * What a REST route answers: a value that is serialised as JSON, or JSON text already built
 * (by PostgreSQL: post.repository.ts), written as it is. One function writes both (http/rest.ts).
 */
export type Reply = ({ status: number; body: unknown } | { status: number; json: string; etag?: string }) & { headers?: Record<string, string> };

export const reply = (body: unknown, status = 200): Reply => ({ status, body });
export const replyJson = (json: string, status = 200, headers?: Record<string, string>): Reply => (headers ? { status, json, headers } : { status, json });
/**
 * The answer of one post, comment or user, with its strong ETag: the tag of this exact text
 * (core/etag.ts), which the client sends back as If-Match to write it.
 */
export const replyTagged = (json: string, status = 200, headers?: Record<string, string>): Reply => ({ ...replyJson(json, status, headers), etag: entityTag(json) });

/** A write's If-Match as the services take it; `required` is REQUIRE_IF_MATCH. */
export const preconditionOf = (req: RestRequest, required: boolean): Precondition => precondition(required, req.header('if-match'));

/**
 * One REST route. Modules export lists of these and http/rest.ts mounts them on an Express
 * Router: parse, call a service, present. A handler gets the request and its context and
 * returns its answer; it never sees Express, so the same rules hold whichever surface calls.
 */
export interface RouteDef {
  method: Method;
  /** Express path, with `:name` for parameters. */
  path: string;
  handler: (req: RestRequest, ctx: RequestContext) => Promise<Reply>;
  /**
   * Its reads may be slightly stale: for anonymous callers they may go to a read replica
   * (db/replicas.ts). Only for routes that read and never write.
   */
  staleReadsOk?: true;
  /**
   * Its 200 to an anonymous caller (no Authorization, no X-Tenant-Id) is the same for everyone:
   * a public read, with a strong ETag, `Cache-Control: public` and 304 on a matching
   * If-None-Match (core/http.ts). Every other answer of every route is `no-store`.
   */
  publicRead?: true;
}
