import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Runs `fn` in a transaction (MikroORM's `em.transactional`: a fork of `em` bound to it, flushed
 * and committed when `fn` returns, rolled back when it throws; a savepoint when `em` is in a
 * transaction already). Work that finds the whole transaction must run again throws
 * RetryTransaction: it is rolled back and run again, at most three times in all.
 *
 * On the ORM's root EntityManager (the background jobs') it runs on a fork that ignores
 * MikroORM's async context: a timer set inside an earlier transaction (the mail outbox's retry)
 * runs in that transaction's context, where the root would resolve to its committed fork.
 */
export async function transactionWithRetry<T>(em: EntityManager, fn: (tx: EntityManager) => Promise<T>): Promise<T> {
  const base = em.global ? em.fork({ disableContextResolution: true }) : em;
  for (let attempt = 1; ; attempt++) {
    try {
      return await base.transactional((tx) => fn(tx));
    } catch (err) {
      if (!(err instanceof RetryTransaction)) throw err;
      if (attempt >= MAX_ATTEMPTS) throw err.reason;
    }
  }
}

const MAX_ATTEMPTS = 3;

/**
 * Thrown by work inside a caller's transaction whose failed statement aborted that transaction
 * where running the whole of it again would succeed (a unique slug taken meanwhile): the
 * transaction is rolled back and `transactionWithRetry` runs it again, at most three times in
 * all, and then throws `reason`. Work that opens a savepoint instead could retry in place, at two
 * more round trips on every run.
 */
export class RetryTransaction extends Error {
  constructor(readonly reason: unknown) {
    super('the transaction must run again');
  }
}
