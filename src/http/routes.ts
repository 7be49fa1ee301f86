import type { RequestContext } from '../core/context';

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
}

/**
 * What a REST route answers: a value that is serialised as JSON, or JSON text already built
 * (by PostgreSQL: post.queries.ts), written as it is. The adapter (http/rest.ts) writes both.
 */
export type Reply = { status: number; body: unknown } | { status: number; json: string };

export const reply = (body: unknown, status = 200): Reply => ({ status, body });
export const replyJson = (json: string, status = 200): Reply => ({ status, json });

/**
 * One REST route. Modules export lists of these; http/rest.ts routes to them and the route table
 * records them, which answers 404 and 405 (with Allow) before any body is read. A handler gets
 * the request and its context and returns its answer: parse, call a service, present.
 */
export interface RouteDef {
  method: Method;
  /** Path with `:name` for parameters. */
  path: string;
  handler: (req: RestRequest, ctx: RequestContext) => Promise<Reply>;
  /**
   * Its reads may be slightly stale: for anonymous callers they may go to a read replica
   * (db/replicas.ts). Only for routes that read and never write.
   */
  staleReadsOk?: true;
}

/** The pattern of a route path: `:name` is one segment; a trailing slash is allowed. */
export function routePattern(path: string): RegExp {
  return new RegExp('^' + path.split('/').map((seg) => (seg.startsWith(':') ? '([^/]+)' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/') + '/?$');
}

/**
 * How many segments a path has, a trailing slash not counted (as routePattern allows one): only
 * routes with the same count can match, so lookups test a handful of patterns, not all of them.
 */
export function segmentCount(path: string): number {
  let n = 0;
  const end = path.length > 1 && path.endsWith('/') ? path.length - 1 : path.length;
  for (let i = 0; i < end; i++) if (path.charCodeAt(i) === 47 /* / */) n++;
  return n;
}

interface TableEntry {
  path: string;
  pattern: RegExp;
  methods: Set<string>;
  index: number;
}

/** What the route table knows of a path: its declared pattern and methods, or null for both. */
export interface RouteLookup {
  /** The declared pattern (`/posts/:id`), for logs and metric labels. */
  route: string | null;
  /** The methods the path accepts, for 405 and Allow. */
  allowed: string[] | null;
}

const UNKNOWN: RouteLookup = { route: null, allowed: null };

/** Known paths and their methods, for 404 vs 405 and the Allow header. */
export class RouteTable {
  private readonly entries: TableEntry[] = [];
  /** The entries by segment count, in the order they were added. */
  private readonly bySegments = new Map<number, TableEntry[]>();
  /**
   * Answers by the set of entries a path matches (nearly always one): a lookup allocates nothing
   * that outlives it. Keyed by path, a cache of paths with ids kept each answer for a thousand
   * requests, long enough to be copied by every young-generation collection.
   */
  private readonly answers = new Map<string, RouteLookup>();

  add(path: string, ...methods: string[]): void {
    this.answers.clear();
    const source = routePattern(path).source;
    let entry = this.entries.find((e) => e.pattern.source === source);
    if (!entry) {
      this.entries.push((entry = { path, pattern: new RegExp(source), methods: new Set(), index: this.entries.length }));
      const count = segmentCount(path);
      this.bySegments.set(count, [...(this.bySegments.get(count) ?? []), entry]);
    }
    for (const m of methods) entry.methods.add(m.toUpperCase());
    if (entry.methods.has('GET')) entry.methods.add('HEAD');
  }

  /** The route and methods of a path; the front looks up each request once (http/front.ts). */
  lookup(path: string): RouteLookup {
    let key = '';
    let matched: TableEntry[] | undefined;
    for (const e of this.bySegments.get(segmentCount(path)) ?? []) {
      if (!e.pattern.test(path)) continue;
      key += `${e.index},`;
      (matched ??= []).push(e);
    }
    if (!matched) return UNKNOWN;
    let found = this.answers.get(key);
    if (!found) {
      const methods = new Set<string>();
      for (const e of matched) e.methods.forEach((m) => methods.add(m));
      found = { route: matched[0].path, allowed: [...methods].sort() };
      this.answers.set(key, found);
    }
    return found;
  }
}
