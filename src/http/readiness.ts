import type { MikroORM } from '@mikro-orm/postgresql';
import { readRoutingOf } from '../db/replicas';

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
