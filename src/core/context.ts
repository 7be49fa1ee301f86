import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Actor } from './actor';
import { AppError } from './errors';

/**
 * What every service call receives: the request's own EntityManager, the caller and the tenant.
 * Built once per request (buildRequestContext, below) and shared by REST routes and GraphQL
 * resolvers, so both surfaces run the same rules with the same state. A plain value, handed to
 * every service call: nothing on the request path reads ambient (async-hook) state.
 */
export interface RequestContext {
  /** The request's own fork, made on first use (buildRequestContext). */
  readonly em: EntityManager;
  /**
   * Where a hot read runs (db/statements.ts): the request's fork once it exists, else the ORM's
   * root EntityManager (`global`), which carries no filter parameters (the cached statement's key
   * says so), so nothing whose filters take a value per request reads through it (tenant posts
   * read through `em`). Forking per request was a tenth of the Node CPU of a small read
   * (GET /posts/:id).
   */
  reader(): EntityManager;
  requestId: string;
  ip: string;
  /** The tenant resolved for this request, or null when none was given. */
  readonly tenantId: number | null;
  /** The authenticated user, loaded on first use; rejects with 401 when the bearer token is bad. */
  actor(): Promise<Actor | null>;
  /** Per-request DataLoaders, created on first use (see core/loaders.ts). */
  loaders: Map<string, unknown>;
  /**
   * 'read' when this request's reads may be slightly stale and so may go to a read replica
   * (db/replicas.ts): set for anonymous post lists and details only. Unset: the primary.
   */
  readFrom?: 'read' | 'write';
  /**
   * Fields a later layer adds to this request's log line (the GraphQL operation, http/logging.ts).
   * An object of its own, so the shallow copy of the context that Apollo hands its plugins shares it.
   */
  logFields?: Record<string, unknown>;
}

/** Fields a later layer adds to the request's log line (the GraphQL operation), on its context. */
export function addLogFields(ctx: Pick<RequestContext, 'logFields'>, fields: Record<string, unknown>): void {
  if (ctx.logFields) Object.assign(ctx.logFields, fields);
}

/** Who a bearer token names (modules/auth/auth.tokens.ts TokenService): checked on first use of `actor()`. */
export interface Authenticator {
  authenticate(ctx: ReadContext, authorization: string | undefined): Promise<Actor | null>;
}

/** What a transport knows about its caller; HTTP reads it from the request, WebSocket from connectionParams. */
export interface ContextInput {
  requestId: string;
  /** The client's address, or how to find it when first asked (only the auth rate limits ask). */
  ip: string | (() => string);
  tenantId: number | null;
  /** The `Authorization` value as sent (`Bearer <token>`), checked on first use of `actor()`. */
  authorization: string | undefined;
}

/** The one way a RequestContext is made, for every transport (HTTP, GraphQL over WebSocket). */
export function buildRequestContext(orm: MikroORM, tokens: Authenticator, input: ContextInput): RequestContext {
  return new LazyContext(orm, tokens, input);
}

/**
 * A class, not an object literal with getters: V8 builds a literal with accessors in the old
 * generation, so every request's context (and what it holds) outlived the young-generation
 * collections and was left to the full ones. Under load that was a sixth of a small read's Node
 * CPU in GC (npm run bench, GET /posts/:id). Its state is plain own properties, so a copy that
 * keeps the prototype (Apollo's `cloneObject`) works as the original does.
 */
class LazyContext implements RequestContext {
  requestId: string;
  tenantId: number | null;
  loaders = new Map<string, unknown>();
  logFields: Record<string, unknown> = {};
  readFrom?: 'read' | 'write';
  private fork: EntityManager | undefined;
  private caller: Promise<Actor | null> | undefined;

  constructor(
    private readonly orm: MikroORM,
    private readonly tokens: Authenticator,
    private readonly input: ContextInput,
  ) {
    this.requestId = input.requestId;
    this.tenantId = input.tenantId;
  }

  get em(): EntityManager {
    return (this.fork ??= requestFork(this.orm, this.input.tenantId));
  }

  reader(): EntityManager {
    return this.fork ?? this.orm.em;
  }

  get ip(): string {
    const { input } = this;
    return typeof input.ip === 'string' ? input.ip : (input.ip = input.ip());
  }

  actor(): Promise<Actor | null> {
    return (this.caller ??= this.tokens.authenticate(this, this.input.authorization));
  }
}

/** What a hot read needs of a request (db/statements.ts). */
export type ReadContext = Pick<RequestContext, 'em' | 'reader'>;

/** A ReadContext over `em` alone (a write's transaction: what is read through it sees the write). */
export const readContextOf = (em: EntityManager): ReadContext => ({ em, reader: () => em });

/** What the `tenant` ORM filter reads (TenantPost): set on the request's fork, copied to its forks. */
export interface TenantFilterParams {
  tenantId: number;
}

/**
 * The request's EntityManager: a fork carrying the tenant resolved for the request as the
 * `tenant` filter's parameters, so every read of tenant posts through it, or through any fork or
 * transaction made from it (MikroORM copies filter parameters to forks), is limited to that tenant.
 */
export function requestFork(orm: MikroORM, tenantId: number | null): EntityManager {
  const em = orm.em.fork();
  if (tenantId !== null) em.setFilterParams('tenant', { tenantId } satisfies TenantFilterParams);
  return em;
}

/** The tenant the `tenant` filter of this EntityManager applies; null when none is set. */
export function filterTenantOf(em: EntityManager): number | null {
  return (em.getFilterParams<TenantFilterParams>('tenant') as TenantFilterParams | undefined)?.tenantId ?? null;
}

export async function requireActor(ctx: RequestContext): Promise<Actor> {
  const user = await ctx.actor();
  if (!user) throw AppError.unauthenticated();
  return user;
}

export async function requireRole(ctx: RequestContext, ...roles: Actor['role'][]): Promise<Actor> {
  const user = await requireActor(ctx);
  if (!roles.includes(user.role)) throw AppError.forbidden();
  return user;
}

export function requireTenant(ctx: RequestContext): number {
  if (ctx.tenantId === null) throw AppError.unauthenticated('Unknown tenant');
  return ctx.tenantId;
}
