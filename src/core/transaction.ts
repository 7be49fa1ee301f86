import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Runs `fn` in a transaction (MikroORM's `em.transactional`: a fork of `em` bound to it, flushed
 * and committed when `fn` returns, rolled back when it throws; a savepoint when `em` is in a
 * transaction already). Work that finds the whole transaction must run again throws
 * RetryTransaction: it is rolled back and run again, at most three times in all.
 */
export async function transactionWithRetry<T>(em: EntityManager, fn: (tx: EntityManager) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await em.transactional((tx) => fn(tx));
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
