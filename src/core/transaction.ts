import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Runs `fn` in a transaction of the ORM's connection, with a fork of `em` bound to it: for work
 * made of statements only (`tx.execute`), which has no entities to flush or to merge back.
 *
 * Why not `em.transactional`: it runs its callback in an AsyncLocalStorage (and a flush does too),
 * and on Node 20 the first store that runs turns on async hooks for every promise the process
 * creates afterwards (about 0.1 ms of Node CPU per GraphQL page in npm run bench). The periodic
 * jobs and the login throttle run on this, so a service that only reads never pays that. Node 24
 * and later build AsyncLocalStorage without async hooks.
 */
export async function sqlTransaction<T>(em: EntityManager, fn: (tx: EntityManager) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await em.getConnection('write').transactional(async (trx) => {
        const tx = em.fork();
        tx.setTransactionContext(trx);
        return fn(tx);
      });
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
 * transaction is rolled back and `sqlTransaction` runs it again, at most three times in all, and
 * then throws `reason`. Work that opens a savepoint instead could retry in place, at two more
 * round trips on every run.
 */
export class RetryTransaction extends Error {
  constructor(readonly reason: unknown) {
    super('the transaction must run again');
  }
}
