import type { Request, Response } from 'express';
import type { RequestContext } from '../core/context';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * One REST route. Modules export lists of these; app.ts mounts them and records them in the
 * route table, which answers 404 and 405 (with Allow) before any body is read.
 */
export interface RouteDef {
  method: Method;
  /** Express path, `:name` for parameters. */
  path: string;
  handler: (req: Request, res: Response) => unknown;
  /**
   * Its reads may be slightly stale: for anonymous callers they may go to a read replica
   * (db/replicas.ts). Only for routes that read and never write.
   */
  staleReadsOk?: true;
}

export function contextOf(res: Response): RequestContext {
  return res.locals.ctx as RequestContext;
}

/** Known paths and their methods, for 404 vs 405 and the Allow header. */
export class RouteTable {
  private readonly entries: { path: string; pattern: RegExp; methods: Set<string> }[] = [];
  /**
   * Answers per path: the guard, the log line and the metric each ask about the request's path,
   * and each scan tests every pattern. Bounded: emptied when full (paths carry ids).
   */
  private readonly seen = new Map<string, { route: string | null; allowed: string[] | null }>();

  add(path: string, ...methods: string[]): void {
    this.seen.clear();
    const source = '^' + path.split('/').map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/') + '/?$';
    let entry = this.entries.find((e) => e.pattern.source === source);
    if (!entry) this.entries.push((entry = { path, pattern: new RegExp(source), methods: new Set() }));
    for (const m of methods) entry.methods.add(m.toUpperCase());
    if (entry.methods.has('GET')) entry.methods.add('HEAD');
  }

  /** null when no route has this path; else the methods it accepts. */
  allowed(path: string): string[] | null {
    return this.lookup(path).allowed;
  }

  /** The declared pattern (`/posts/:id`) a path belongs to, for logs and metric labels; null when none. */
  match(path: string): string | null {
    return this.lookup(path).route;
  }

  private lookup(path: string): { route: string | null; allowed: string[] | null } {
    let found = this.seen.get(path);
    if (!found) {
      found = { route: this.entries.find((e) => e.pattern.test(path))?.path ?? null, allowed: this.scan(path) };
      if (this.seen.size >= 1000) this.seen.clear();
      this.seen.set(path, found);
    }
    return found;
  }

  private scan(path: string): string[] | null {
    const methods = new Set<string>();
    let found = false;
    for (const e of this.entries) {
      if (e.pattern.test(path)) {
        found = true;
        e.methods.forEach((m) => methods.add(m));
      }
    }
    return found ? [...methods].sort() : null;
  }
}
