import type { MikroORM } from '@mikro-orm/postgresql';
import { applicationNameOf } from '../../mikro-orm.config';
import { withTimeout } from './replicas';
import { runStatement, sql } from './statements';

/** pg_stat_activity's states, as metric label values (`idle in transaction` → `idle_in_transaction`). */
export const CONNECTION_STATES = ['active', 'idle', 'idle_in_transaction', 'idle_in_transaction_aborted', 'fastpath_function_call', 'disabled'] as const;

/**
 * This ORM's connections to the primary by state, as PostgreSQL sees them: pg_stat_activity's
 * rows carrying the ORM's application_name (mikro-orm.config.ts), which no other ORM shares. The
 * connection that asks is left out, so an idle pool reads as idle. Null when the primary does not
 * answer within `timeoutMs` (a scrape must not wait out the pool's acquire timeout).
 */
export async function connectionsByState(orm: MikroORM, timeoutMs = 1000): Promise<Map<string, number> | null> {
  const name = applicationNameOf(orm.config);
  if (!name) return null;
  // Out of the query log: a scrape every few seconds would drown it, and tests count a request's lines.
  const query = runStatement<{ state: string | null; n: number }>(orm.em, sql`select state, count(*)::int as n from pg_stat_activity where application_name = ${name} and pid <> pg_backend_pid() group by state`, { quiet: true });
  return withTimeout(query, timeoutMs).then((rows) => new Map(rows.map((r) => [(r.state ?? 'unknown').replace(/[^a-z]+/g, '_').replace(/_$/, ''), r.n])), () => null);
}

/**
 * Whether the primary answers `select 1` within `timeoutMs` (/readyz). A stopped database fails at
 * once (connection refused); a hung one (overloaded, paused, a network partition) would make
 * /readyz hang as long as the load balancer waits, so it counts as not ready after the timeout.
 */
export const databaseReady = (orm: MikroORM, timeoutMs = 2000): Promise<boolean> => withTimeout(runStatement(orm.em, sql`select 1`), timeoutMs).then(() => true, () => false);
