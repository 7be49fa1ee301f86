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
export function sqlTransaction<T>(em: EntityManager, fn: (tx: EntityManager) => Promise<T>): Promise<T> {
  return em.getConnection('write').transactional(async (trx) => {
    const tx = em.fork();
    tx.setTransactionContext(trx);
    return fn(tx);
  });
}
