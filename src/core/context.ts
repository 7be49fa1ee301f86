import { AsyncLocalStorage } from 'node:async_hooks';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { User } from '../modules/user/user.entity';
import { AppError } from './errors';

/**
 * What every service call receives: the request's own EntityManager, the caller and the tenant.
 * Built once per request (http/context.middleware.ts) and shared by REST routes and GraphQL
 * resolvers, so both surfaces run the same rules with the same state.
 */
export interface RequestContext {
  em: EntityManager;
  requestId: string;
  ip: string;
  /** The tenant resolved for this request, or null when none was given. */
  readonly tenantId: number | null;
  /** The authenticated user, loaded on first use; rejects with 401 when the bearer token is bad. */
  actor(): Promise<User | null>;
  /** Per-request DataLoaders, created on first use (see core/loaders.ts). */
  loaders: Map<string, unknown>;
  /**
   * 'read' when this request's reads may be slightly stale and so may go to a read replica
   * (db/replicas.ts): set for anonymous post lists and details only. Unset: the primary.
   */
  readFrom?: 'read' | 'write';
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs `fn` (and every async continuation it starts) with `ctx` as the current request. */
export function runWithContext<T>(ctx: RequestContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

export function currentContext(): RequestContext | undefined {
  return storage.getStore();
}

/** The tenant of the current request, read by the `tenant` ORM filter on every tenant-post query. */
export function currentTenantId(): number | null {
  return storage.getStore()?.tenantId ?? null;
}

export async function requireActor(ctx: RequestContext): Promise<User> {
  const user = await ctx.actor();
  if (!user) throw AppError.unauthenticated();
  return user;
}

export async function requireRole(ctx: RequestContext, ...roles: User['role'][]): Promise<User> {
  const user = await requireActor(ctx);
  if (!roles.includes(user.role)) throw AppError.forbidden();
  return user;
}

export function requireTenant(ctx: RequestContext): number {
  if (ctx.tenantId === null) throw AppError.unauthenticated('Unknown tenant');
  return ctx.tenantId;
}
