import { createHash } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { requireActor, requireTenant, type RequestContext } from '../../core/context';
import { AppError } from '../../core/errors';
import { intervalJob, type BackgroundJob } from '../../core/jobs';
import type { Logger } from '../../core/logger';
import { transactionWithRetry } from '../../core/transaction';
import { UnreadBody } from '../../core/validation';
import { sharedPeriod } from '../../db/jobs';
import type { Statement } from '../../db/statements';
import { lockAndLookUp, purgeExpiredKeys, readAnswer, storeAnswer, storeAnswerOf } from './idempotency.repository';

export const KEY_IN_PROGRESS = 'A request with this Idempotency-Key is in progress';
export const KEY_REUSED = 'Idempotency-Key reused for a different request';
const KEY_INVALID = 'must be 1 to 255 visible ASCII characters';
/** 1–255 visible ASCII characters (0x21–0x7E): no spaces, no control or non-ASCII characters. */
const VALID_KEY = /^[\x21-\x7e]{1,255}$/;
const KEY_ANONYMOUS = 'is accepted only from a signed-in caller (a bearer token)';
const EXPIRY_EVERY_MS = 10 * 60_000;

/** What a create with an Idempotency-Key is known by: whose key, the key, and what was asked. */
export interface IdempotentRequest {
  scope: string;
  key: string;
  fingerprint: string;
  /** The key's name on its surface (`Idempotency-Key` header, `idempotencyKey` argument), for its 422s. */
  field: string;
}

/** What a create answers; `body` is the exact JSON text a replay sends again (null: read anew). */
export interface Created<T> {
  status: number;
  body: string | null;
  resourceId: number;
  value: T;
}

/**
 * Runs a create's answer statement (one row, the answer's JSON text as `json`) in the create's
 * transaction `tx`. Under a key, that same statement also stores the JSON as the key's answer,
 * so a keyed create costs no extra round trip for it. Null when the statement found no row.
 */
export type KeepAnswer = (tx: EntityManager, statement: Statement, created: { status: number; resourceId: number }) => Promise<string | null>;

export type Outcome<T> = ({ replayed: false } & Created<T>) | { replayed: true; status: number; body: string | null; resourceId: number };

/** What a surface hands over, as plain values: the surface parses the header or argument. */
export interface KeyedCall {
  /** The key as sent; undefined or null when none was. */
  key: string | null | undefined;
  field: string;
  /** The request the key stands for: method and path (REST), or `GRAPHQL` and the mutation name. */
  method: string;
  path: string;
  body: unknown;
  /** Tenant posts: the scope is the tenant (and the user when one is signed in). */
  tenant?: boolean;
}

/**
 * Safe retries of creates. A key belongs to its caller's scope; within it, the first request runs
 * and its answer is stored in the same transaction as its write, so a row and its stored answer
 * commit together or not at all (a crash before the commit leaves neither, and the retry runs
 * anew). Concurrent repeats are decided by PostgreSQL, never by this process: a transaction-scoped
 * advisory lock on (scope, key) is taken without waiting, and a repeat that does not get it is
 * refused with 409, on whichever instance it arrives.
 */
export class IdempotencyService {
  constructor(private readonly hours: number) {}

  /**
   * The caller's scope (401 first, as for any create), then the key's check (422), then the
   * request's fingerprint. Undefined when no key was sent: the create runs as without this service.
   */
  async prepare(ctx: RequestContext, call: KeyedCall): Promise<IdempotentRequest | undefined> {
    if (call.key === undefined || call.key === null) return undefined;
    const scope = await scopeOf(ctx, call.tenant === true);
    if (typeof call.key !== 'string' || !VALID_KEY.test(call.key)) throw AppError.validation([{ field: call.field, message: `${call.field} ${KEY_INVALID}` }]);
    if (scope === null) throw AppError.validation([{ field: call.field, message: `${call.field} ${KEY_ANONYMOUS}` }]);
    return { scope, key: call.key, fingerprint: fingerprint(call.method, call.path, call.body), field: call.field };
  }

  /**
   * Runs `create` once per key: under the key's lock, a stored answer of the same request is
   * replayed (nothing is written), one of another request is a 422, and otherwise `create` runs
   * on a context whose EntityManager is this transaction, its answer is stored, and both commit
   * together. Errors are not stored: a create that failed wrote nothing, so its retry runs anew.
   * `create` may read its answer through `keep`, which then stores it in the same statement;
   * otherwise (an answer that is not JSON text read by one statement) it is stored after.
   */
  async run<T>(ctx: RequestContext, request: IdempotentRequest | undefined, create: (ctx: RequestContext, keep: KeepAnswer) => Promise<Created<T>>): Promise<Outcome<T>> {
    // Without a key the answer is only read.
    if (!request) return { replayed: false, ...(await create(ctx, readAnswer)) };
    return transactionWithRetry(ctx.em, async (tx) => {
      // The lock and the lookup in one round trip. The lookup reads the statement's snapshot, taken
      // before the lock: a repeat whose first request committed in between finds no row, runs, and
      // meets that row where the answer is stored (409, its create undone), so it never writes a second.
      const found = await lockAndLookUp(tx, keyLock(request.scope, request.key), request.scope, request.key);
      if (!found.locked) throw AppError.inConflict(KEY_IN_PROGRESS);
      if (found.fingerprint !== null) {
        if (found.fingerprint !== request.fingerprint) throw AppError.conflict(request.field, KEY_REUSED);
        return { replayed: true, status: found.status!, body: found.body, resourceId: found.resource_id! };
      }
      let kept: number | undefined;
      const record = (status: number, resourceId: number) => ({ ...request, status, resourceId, hours: this.hours });
      const keep: KeepAnswer = async (tx, statement, { status, resourceId }) => {
        const json = await storeAnswerOf(tx, record(status, resourceId), statement);
        if (json === null) {
          // Nothing stored: either the statement found no row, or a live answer is stored under
          // the key already (a repeat that raced the first's commit). Only the second is a 409
          // (the create is undone; the repeat then gets the stored answer).
          if ((await readAnswer(tx, statement)) === null) return null;
          throw AppError.inConflict(KEY_IN_PROGRESS);
        }
        kept = resourceId;
        return json;
      };
      const created = await create(withinTransaction(ctx, tx), keep);
      if (kept === created.resourceId) return { replayed: false, ...created };
      if (!(await storeAnswer(tx, record(created.status, created.resourceId), created.body))) throw AppError.inConflict(KEY_IN_PROGRESS);
      return { replayed: false, ...created };
    });
  }
}

/** Deletes the keys past their hours (lookups already ignore them), every 10 minutes, once between all instances. */
export function idempotencyExpiryJob(orm: MikroORM, log: Logger): BackgroundJob & { runNow(): Promise<void> } {
  return intervalJob(
    'idempotency-key-expiry',
    EXPIRY_EVERY_MS,
    () => purgeExpiredKeys(orm.em.fork()),
    (err) => log.warn({ err }, 'idempotency key expiry failed'),
    { shared: sharedPeriod(orm) },
  );
}

/** `u:<user>` for the blog's creates; `t:<tenant>` (plus `:u:<user>` when signed in) for tenant posts, which need no user. */
/**
 * Whose keys these are: the signed-in caller's (`u:<id>`), and for tenant posts within the tenant
 * (`t:<tenant>:u:<id>`). A tenant post may be created without signing in, but not with a key:
 * anonymous callers of one tenant cannot be told apart, so they would replay each other's creates.
 * Null for such a caller (the key is refused).
 */
async function scopeOf(ctx: RequestContext, tenant: boolean): Promise<string | null> {
  if (!tenant) return `u:${(await requireActor(ctx)).id}`;
  const tenantId = requireTenant(ctx);
  const actor = await ctx.actor();
  return actor ? `t:${tenantId}:u:${actor.id}` : null;
}

/**
 * The advisory lock of a key in its scope: 64 bits of the SHA-256 of both, so two keys share a
 * lock (one then gets the other's 409) about once in 2^64 pairs. (32-bit `hashtext` made that
 * one in 2^32: a real service meets such a pair.) The other one-key advisory locks are small
 * constants and 64-bit hashes of other strings; the slugs' are pairs of 32-bit keys, another space.
 */
export function keyLock(scope: string, key: string): string {
  return BigInt.asIntN(64, BigInt(`0x${createHash('sha256').update(`idempotency\n${scope}\n${key}`).digest('hex').slice(0, 16)}`)).toString();
}

/** SHA-256 of the method, the path (without a trailing slash) and the body with its object keys sorted. */
function fingerprint(method: string, path: string, body: unknown): string {
  const text = body instanceof UnreadBody ? `unread:${body.contentType}` : body === undefined ? '' : canonicalJson(body);
  return createHash('sha256').update(`${method}\n${path.replace(/\/+$/, '')}\n${text}`).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The request's context with `tx` as its EntityManager, so that a service's statements (and the
 * nested transactions it opens, as savepoints) belong to the key's transaction. Everything else
 * (caller, tenant, loaders) is the request's own, through the prototype.
 */
function withinTransaction(ctx: RequestContext, tx: EntityManager): RequestContext {
  return Object.create(ctx, { em: { value: tx }, reader: { value: () => tx } }) as RequestContext;
}
