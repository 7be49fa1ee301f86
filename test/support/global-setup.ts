import { chmodSync, mkdtempSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded';
import { poolerMissing, startPgBouncer } from './pgbouncer';
import { onInterrupt, RUN_MARKER, stopRun } from './run-cleanup';
import { createTemplate, TEMPLATE_ENV } from './template-database';

/**
 * One PostgreSQL for the whole run: TEST_DATABASE_URL when given (it needs CREATEDB), else an
 * embedded cluster in a fresh temporary folder, without fsync (a throwaway cluster, as the test
 * server's: a crash would lose nothing of value). Each test file creates its own database in it,
 * a copy of the run's migrated template (template-database.ts).
 * With TEST_POOLER=pgbouncer (`npm run test:pooler`), Debian's PgBouncer in transaction mode
 * stands in front of it, and every app the tests start reaches its database through the pooler
 * (DATABASE_URL) and the server itself (DATABASE_DIRECT_URL): test/support/harness.ts.
 *
 * The run has a temporary folder of its own, TMPDIR for everything it starts (the test
 * PostgreSQL's cluster, the tests' folders and copies), removed at the end; in memory when the
 * machine allows (runParent). Interrupted (SIGINT,
 * SIGTERM, SIGHUP), this process stops every process of the run and removes that folder before
 * it exits: test/support/run-cleanup.ts.
 */
/** A tmpfs: its fsync costs nothing (statfs(2) f_type). */
const TMPFS_MAGIC = 0x01021994;
const SHM = '/dev/shm';

/**
 * Where the run's folder goes: TMPDIR when it is set (test/interrupt.test.ts gives one); else
 * /dev/shm when it is a tmpfs with room to spare, else the system's temporary folder. The run's
 * PostgreSQL clusters live there, and most of them fsync (npm start's embedded one, the replica
 * pair's primary, the clusters of the recovery tests): in memory a checkpoint or an initdb's sync
 * costs nothing, and every process still runs exactly as on a disk.
 */
function runParent(): string {
  if (process.env.TMPDIR) return tmpdir();
  try {
    const fs = statfsSync(SHM);
    if (fs.type === TMPFS_MAGIC && fs.bavail * fs.bsize > 4 * 1024 ** 3) return SHM;
  } catch { /* no /dev/shm here */ }
  return tmpdir();
}

export default async function globalSetup(): Promise<void> {
  const handle: Record<string, unknown> = {};
  (globalThis as Record<string, unknown>).__TEST_PG__ = handle;
  const run = mkdtempSync(join(runParent(), 'blog-api-run-'));
  chmodSync(run, 0o755); // as root, PostgreSQL runs as `postgres`, who must reach the clusters below
  handle.run = run;
  // Both before anything starts: the jest workers, the tests and what they start inherit them.
  process.env[RUN_MARKER] = run;
  process.env.TMPDIR = run;
  onInterrupt(() => stopRun(run, [run]));
  if (process.env.TEST_DATABASE_URL) {
    process.env.TEST_PG_URL = process.env.TEST_DATABASE_URL;
  } else {
    const dir = mkdtempSync(join(run, 'blog-api-test-'));
    chmodSync(dir, 0o755); // as root, PostgreSQL runs as `postgres`, who must reach the cluster
    const pg: EmbeddedPostgres = await startEmbeddedPostgres({ dataDir: dir, durable: false });
    process.env.TEST_PG_URL = pg.url;
    Object.assign(handle, { pg, dir });
  }
  process.env[TEMPLATE_ENV] = await createTemplate(process.env.TEST_PG_URL);
  if (process.env.TEST_POOLER) {
    if (process.env.TEST_POOLER !== 'pgbouncer') throw new Error(`TEST_POOLER=${process.env.TEST_POOLER}: only pgbouncer is known`);
    const missing = poolerMissing();
    if (missing) throw new Error(`TEST_POOLER=pgbouncer: ${missing}`);
    const pooler = await startPgBouncer(process.env.TEST_PG_URL);
    process.env.TEST_PG_POOLED_URL = pooler.pooled(process.env.TEST_PG_URL);
    handle.pooler = pooler;
  }
}
