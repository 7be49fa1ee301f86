import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startEmbeddedPostgres, sweepOrphanedClusters } from '../src/db/embedded';

/**
 * A throwaway DATA_DIR leaves no database behind. As root, with a DATA_DIR the `postgres` user
 * cannot enter (mktemp -d makes it 0700), the cluster lives in /var/tmp/embedded-postgres-data-<hash>;
 * once that DATA_DIR is gone, the next start removes it, unless its PostgreSQL still runs.
 * As another user the cluster is always inside DATA_DIR, and removing DATA_DIR removes it.
 */
const made: string[] = [];
afterAll(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Ages the marker past the minute in which a cluster counts as a start in progress. */
const aged = (base: string) => {
  const past = new Date(Date.now() - 120_000);
  utimesSync(join(base, 'data-dir'), past, past);
};

it('the cluster of a removed DATA_DIR is removed by the next start, one whose PostgreSQL runs is kept', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'blog-api-sweep-'));
  made.push(dataDir);
  const pg = await startEmbeddedPostgres({ dataDir });
  const cluster = realpathSync(join(dataDir, 'postgres'));
  if (process.getuid?.() !== 0) {
    await pg.stop();
    expect(cluster.startsWith(`${realpathSync(dataDir)}/`)).toBe(true);
    return;
  }
  const base = dirname(cluster);
  made.push(base);
  expect(base).toMatch(/^\/var\/tmp\/embedded-postgres-data-[0-9a-f]{16}$/);
  expect(readFileSync(join(base, 'data-dir'), 'utf8')).toBe(dataDir);
  aged(base);

  // Its DATA_DIR is there and points at it: kept.
  expect(sweepOrphanedClusters()).not.toContain(base);
  // DATA_DIR removed while its PostgreSQL runs: kept, the postmaster is alive.
  rmSync(dataDir, { recursive: true, force: true });
  expect(sweepOrphanedClusters()).not.toContain(base);
  expect(existsSync(cluster)).toBe(true);
  await pg.stop();

  // Stopped, its DATA_DIR gone: the next start (on another DATA_DIR) removes it and says so.
  const next = mkdtempSync(join(tmpdir(), 'blog-api-sweep-'));
  const lines: string[] = [];
  const second = await startEmbeddedPostgres({ dataDir: next, log: (m) => lines.push(m) });
  made.push(next, dirname(realpathSync(join(next, 'postgres'))));
  await second.stop();
  expect(existsSync(base)).toBe(false);
  expect(lines).toContain(`removed ${base}: the database cluster of a DATA_DIR that no longer exists`);
}, 60_000);
