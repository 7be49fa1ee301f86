import type { MikroORM } from '@mikro-orm/postgresql';
import { applicationNameOf } from '../../mikro-orm.config';
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
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs)));
  // Out of the query log: a scrape every few seconds would drown it, and tests count a request's lines.
  const query = runStatement<{ state: string | null; n: number }>(orm.em, sql`select state, count(*)::int as n from pg_stat_activity where application_name = ${name} and pid <> pg_backend_pid() group by state`, { quiet: true })
    .then((rows) => new Map(rows.map((r) => [(r.state ?? 'unknown').replace(/[^a-z]+/g, '_').replace(/_$/, ''), r.n])), () => null);
  try {
    return await Promise.race([query, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether the primary answers `select 1` (/readyz: http/readiness.ts). */
export const databaseAnswers = (orm: MikroORM): Promise<boolean> => runStatement(orm.em, sql`select 1`).then(() => true, () => false);
