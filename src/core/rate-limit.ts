import type { EntityManager } from '@mikro-orm/postgresql';
import type { MikroORM } from '@mikro-orm/postgresql';
import { intervalJob, type BackgroundJob } from './jobs';
import type { Logger } from './logger';

/**
 * Fixed-window counters in PostgreSQL (table rate_limits), so every instance sees the same
 * numbers. A window is aligned to a multiple of its length; `hit` is one atomic upsert, so
 * concurrent requests never lose a count.
 */
export interface WindowCount {
  count: number;
  /** Seconds until the current window ends (what Retry-After carries). */
  retryAfter: number;
}

function windowOf(windowMs: number, now = Date.now()) {
  const start = Math.floor(now / windowMs) * windowMs;
  return { start: new Date(start), end: new Date(start + windowMs), retryAfter: Math.max(1, Math.ceil((start + windowMs - now) / 1000)) };
}

export class RateLimiter {
  /** Adds one to `key`'s current window and returns the new count. */
  async hit(em: EntityManager, key: string, windowMs: number): Promise<WindowCount> {
    const w = windowOf(windowMs);
    const rows = await em.execute<{ count: number }[]>(
      `insert into rate_limits (key, window_start, count, expires_at) values (?, ?, 1, ?)
       on conflict (key, window_start) do update set count = rate_limits.count + 1
       returning count`,
      [key, w.start, w.end],
    );
    return { count: Number(rows[0].count), retryAfter: w.retryAfter };
  }

  /** The current window's count for `key`, without changing it. */
  async peek(em: EntityManager, key: string, windowMs: number): Promise<WindowCount> {
    const w = windowOf(windowMs);
    const rows = await em.execute<{ count: number }[]>(
      'select count from rate_limits where key = ? and window_start = ?',
      [key, w.start],
    );
    return { count: rows.length ? Number(rows[0].count) : 0, retryAfter: w.retryAfter };
  }

  /** Forgets `key` (e.g. failed logins after a successful one). */
  async reset(em: EntityManager, key: string): Promise<void> {
    await em.execute('delete from rate_limits where key = ?', [key]);
  }

  /** Deletes windows that have ended, every `intervalMs`. */
  cleanupJob(orm: MikroORM, log: Logger, intervalMs = 10 * 60_000): BackgroundJob {
    return intervalJob(
      'rate-limit-cleanup',
      intervalMs,
      async () => {
        await orm.em.fork().execute('delete from rate_limits where expires_at < now()');
      },
      (err) => log.warn({ err }, 'rate-limit cleanup failed'),
    );
  }
}
