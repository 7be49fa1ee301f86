import { LockMode, type EntityManager, type EntityName, type FilterOptions, type FilterQuery } from '@mikro-orm/postgresql';

/**
 * One state change of one row, decided under the row's lock instead of on what was read earlier.
 * A transaction of its own reads the row with SELECT ... FOR UPDATE; `decide` sees it (null when
 * no row matches `where` under `filters`), edits it or throws (which rolls back), and the commit
 * writes the edit.
 *
 * Why this serializes: concurrent changes of the row queue on its lock, and under READ COMMITTED
 * PostgreSQL re-checks the WHERE (the ORM filters included) against the newest version of a row
 * it waited for, so each change sees what the one before it left, and a row that no longer
 * qualifies (restored, trashed, deleted meanwhile) is simply not found. Of conflicting changes
 * exactly one wins; the others answer from the state it left.
 *
 * `decide` also gets the transaction, for statements that must commit with the change (the live
 * events' pg_notify, db/events.ts), and may be async.
 *
 * `refresh`: an entity this request loaded earlier is overwritten with the locked row, not
 * returned from the identity map as it was.
 */
export function changeUnderRowLock<T extends object, R>(
  em: EntityManager,
  entity: EntityName<T>,
  where: FilterQuery<NoInfer<T>>,
  filters: FilterOptions,
  decide: (row: T | null, tx: EntityManager) => R | Promise<R>,
): Promise<R> {
  return em.transactional(async (tx) => {
    const row = await tx.findOne(entity, where, { filters, lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    return decide(row, tx);
  });
}

/**
 * How the caller of a write wants the written row back: called in the write's transaction, after
 * its flush, with that transaction (so a read through it sees the row as the write left it) and
 * the row; or, for a write whose row nothing else changes (a new comment, a new tenant post),
 * right after its commit with the request's EntityManager. A surface chooses its own answer this way, and the service stays format-free: GraphQL
 * presents the entity, REST reads its JSON back by id through the builder its reads use.
 */
export type ReadBack<E, T> = (tx: EntityManager, row: E) => T | Promise<T>;
