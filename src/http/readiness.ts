import type { MikroORM } from '@mikro-orm/postgresql';
import { databaseAnswers } from '../db/activity';
import { readRoutingOf } from '../db/replicas';

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
  try {
    return await Promise.race([databaseAnswers(orm), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * For /readyz when DATABASE_REPLICA_URLS is set: the replicas serving reads now, and those
 * skipped with why (down, lagging, not a standby). Names follow the setting's order
 * (replica-1, ...); URLs are never shown. Nothing when no replica is configured.
 */
export function replicasReadiness(orm: MikroORM): { replicas?: { in_use: string[]; skipped: { name: string; reason: string }[] } } {
  const routing = readRoutingOf(orm);
  if (!routing?.replicas.length) return {};
  const states = routing.status();
  return {
    replicas: {
      in_use: states.filter((r) => r.inUse).map((r) => r.name),
      skipped: states.filter((r) => !r.inUse).map((r) => ({ name: r.name, reason: r.reason ?? 'down' })),
    },
  };
}
