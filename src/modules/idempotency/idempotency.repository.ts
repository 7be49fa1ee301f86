import type { EntityManager } from '@mikro-orm/postgresql';
import { runStatement, sql, type Statement } from '../../db/statements';

/** The Idempotency-Keys' statements (idempotency.service.ts); the SQL of each is in idempotency.repository.sql (npm run sql). */

/** A key's stored answer, if a live one is there, and whether this transaction holds the key's lock. */
type KeyLookup = { locked: boolean; fingerprint: string | null; status: number | null; body: string | null; resource_id: number | null };

/**
 * The key's transaction-scoped advisory lock (`lock`, taken without waiting) and its live answer,
 * in one round trip. The lookup reads the statement's snapshot, taken before the lock.
 */
export async function lockAndLookUp(tx: EntityManager, lock: string, scope: string, key: string): Promise<KeyLookup> {
  const [found] = await runStatement<KeyLookup>(tx, sql`select pg_try_advisory_xact_lock(${lock}::bigint) as locked, k.fingerprint, k.status, k.body, k.resource_id
    from (values (1)) one left join idempotency_keys k on k.scope = ${scope} and k.key = ${key} and k.expires_at > now()`);
  return found;
}

/** What a key stores besides its answer's JSON text. */
type KeyRecord = { scope: string; key: string; fingerprint: string; status: number; resourceId: number; hours: number };

const STORE_KEY = `insert into idempotency_keys (scope, key, fingerprint, status, body, resource_id, created_at, expires_at)`;
/**
 * A row still there is expired (the lookup ignores those): the key starts anew. A live one is
 * never overwritten; under the key's lock none can appear, and were one there nothing is stored.
 */
const UNLESS_LIVE = `on conflict (scope, key) do update set fingerprint = excluded.fingerprint, status = excluded.status, body = excluded.body,
    resource_id = excluded.resource_id, created_at = excluded.created_at, expires_at = excluded.expires_at
    where idempotency_keys.expires_at <= now()`;

/**
 * Stores as the key's answer the JSON text that `answer` (a statement of one row, its JSON as
 * `json`) reads, in the same statement, and returns it; null when nothing was stored (no row, or
 * a live answer already there).
 */
export async function storeAnswerOf(tx: EntityManager, r: KeyRecord, answer: Statement): Promise<string | null> {
  const [row] = await runStatement<{ json: string }>(tx, {
    sql: `${STORE_KEY} select ?, ?, ?, ?, answer.json, ?, now(), now() + make_interval(hours => ?) from (${answer.sql}) answer ${UNLESS_LIVE} returning body as json`,
    params: [r.scope, r.key, r.fingerprint, r.status, r.resourceId, r.hours, ...answer.params],
  });
  return row?.json ?? null;
}

/** Stores `body` as the key's answer; false when a live answer was there already. */
export async function storeAnswer(tx: EntityManager, r: KeyRecord, body: string | null): Promise<boolean> {
  const rows = await runStatement(tx, {
    sql: `${STORE_KEY} values (?, ?, ?, ?, ?, ?, now(), now() + make_interval(hours => ?)) ${UNLESS_LIVE} returning 1`,
    params: [r.scope, r.key, r.fingerprint, r.status, body, r.resourceId, r.hours],
  });
  return rows.length === 1;
}

/** The JSON text a create's answer statement reads (one row, as `json`), or null for no row. */
export async function readAnswer(tx: EntityManager, answer: Statement): Promise<string | null> {
  return (await runStatement<{ json: string }>(tx, answer))[0]?.json ?? null;
}

/** Deletes the keys past their hours (lookups already ignore them). */
export async function purgeExpiredKeys(em: EntityManager): Promise<void> {
  await runStatement(em, sql`delete from idempotency_keys where expires_at <= now()`);
}
