import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { intervalJob, type BackgroundJob } from '../core/jobs';
import type { Logger } from '../core/logger';
import { transactionWithRetry } from '../core/transaction';
import { sharedPeriod } from './jobs';
import { runStatement, sql } from './statements';

/**
 * Limits kept in PostgreSQL, so every instance sees the same numbers.
 *
 * - `hit`: fixed-window counters (table rate_limits), one atomic upsert per hit. Cheap; a burst
 *   over a window boundary can reach twice the limit, which is fine for the per-IP budget.
 * - `attempt`: sliding windows (table rate_attempts, one row per counted attempt), for the limits
 *   that guard secrets and mailboxes, where that doubling is not acceptable.
 */
export interface WindowCount {
  count: number;
  /** Seconds until the current window ends (what Retry-After carries). */
  retryAfter: number;
}

export type AttemptResult = { allowed: true } | { allowed: false; retryAfter: number };

function windowOf(windowMs: number, now = Date.now()) {
  const start = Math.floor(now / windowMs) * windowMs;
  return { start: new Date(start), end: new Date(start + windowMs), retryAfter: Math.max(1, Math.ceil((start + windowMs - now) / 1000)) };
}

export class RateLimiter {
  /** Adds one to `key`'s current fixed window and returns the new count. */
  async hit(em: EntityManager, key: string, windowMs: number): Promise<WindowCount> {
    const w = windowOf(windowMs);
    const rows = await runStatement<{ count: number }>(em, sql`insert into rate_limits (key, window_start, count, expires_at) values (${key}, ${w.start}, 1, ${w.end})
       on conflict (key, window_start) do update set count = rate_limits.count + 1
       returning count`);
    return { count: Number(rows[0].count), retryAfter: w.retryAfter };
  }

  /**
   * Records one attempt for `key` unless `limit` attempts already lie within the last `windowMs`;
   * then nothing is recorded and `retryAfter` is the time until the oldest attempt that keeps the
   * key at its limit leaves the window. The row stays (the attempt counts) until `clear` or expiry.
   */
  async attempt(em: EntityManager, key: string, limit: number, windowMs: number): Promise<AttemptResult> {
    return transactionWithRetry(em, async (tx) => {
      // Attempts for one key take turns here, so each one sees every earlier one, committed:
      // a parallel burst cannot all read the same count and all get through.
      await runStatement(tx, sql`select pg_advisory_xact_lock(hashtextextended(${`rate-attempts:${key}`}, 0))`);
      const ms = Math.round(windowMs);
      const full = await runStatement<{ left: string }>(tx, sql`select extract(epoch from at + interval '1 millisecond' * ${ms} - now()) as left from rate_attempts
          where key = ${key} and at > now() - interval '1 millisecond' * ${ms}
          order by at desc, id desc offset ${limit - 1} limit 1`);
      if (full.length) return { allowed: false, retryAfter: Math.max(1, Math.ceil(Number(full[0].left))) };
      await runStatement(tx, sql`insert into rate_attempts (key, at, expires_at) values (${key}, now(), now() + interval '1 millisecond' * ${ms})`);
      return { allowed: true };
    });
  }

  /** Forgets `key`'s attempts (e.g. failed logins after a successful one). */
  async clear(em: EntityManager, key: string): Promise<void> {
    await runStatement(em, sql`delete from rate_attempts where key = ${key}`);
  }

  /** Deletes ended windows and attempts that left their window, every `intervalMs`. */
  cleanupJob(orm: MikroORM, log: Logger, intervalMs = 10 * 60_000): BackgroundJob & { runNow(): Promise<void> } {
    return intervalJob(
      'rate-limit-cleanup',
      intervalMs,
      async () => {
        const em = orm.em.fork();
        await runStatement(em, sql`delete from rate_limits where expires_at < now()`);
        await runStatement(em, sql`delete from rate_attempts where expires_at < now()`);
      },
      (err) => log.warn({ err }, 'rate-limit cleanup failed'),
      { shared: sharedPeriod(orm) },
    );
  }
}
