import type { MikroORM } from '@mikro-orm/postgresql';

/**
 * Whether the database answers `select 1` within `timeoutMs`. A stopped database fails at
 * once (connection refused); a hung one (overloaded, paused, a network partition) would make
 * /readyz hang as long as the load balancer waits, so it counts as not ready after the timeout.
 */
export async function databaseReady(orm: MikroORM, timeoutMs = 2000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const probe = orm.em
    .getConnection()
    .execute('select 1', [], 'get')
    .then(() => true, () => false);
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
