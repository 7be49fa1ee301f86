import type { EntityManager } from '@mikro-orm/postgresql';
import { runStatement, sql } from '../../db/statements';

/**
 * The trash retention's statements (trash.service.ts; the trash's reads are the posts' builder
 * and its deletes the ORM's); the SQL of each is in trash.repository.sql (npm run sql).
 */

/** The transaction-scoped advisory lock `key`, taken without waiting: whether this transaction holds it. */
export async function tryRetentionLock(tx: EntityManager, key: number): Promise<boolean> {
  const [{ locked }] = await runStatement<{ locked: boolean }>(tx, sql`select pg_try_advisory_xact_lock(${key}) as locked`);
  return locked;
}

/** Deletes the posts trashed more than `days` ago (their comments go by the foreign key); their ids. */
export async function deleteTrashedBefore(tx: EntityManager, days: number): Promise<number[]> {
  const rows = await runStatement<{ id: number }>(tx, sql`delete from posts where deleted_at is not null and deleted_at < now() - make_interval(days => ${days}) returning id`);
  return rows.map((r) => r.id);
}
