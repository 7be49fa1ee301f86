import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RUN_MARKER } from './run-cleanup';

/**
 * The service as `npm start` runs it (scripts/build.mjs's dist/), built once per test run and
 * shared by every test file that starts the built service (several instances, a process of its
 * own under V8 flags, the scripts): `<root>/dist/src/main.js`. The root is a scratch folder in
 * the run's temporary folder whose sources are symlinks to this checkout, so the build never
 * touches the checkout's own dist/ (another engineer's `npm start` may run from it).
 *
 * The first file to ask builds it; a file in another jest worker asking meanwhile waits for that
 * build (a lock folder), and every later one finds it done. Nothing deletes it before the run
 * ends, so a file may start processes from it while another file asks for it.
 */
const checkout = join(__dirname, '..', '..');
const SOURCES = ['src', 'scripts', 'bench', 'node_modules', '.swcrc', 'mikro-orm.config.ts', 'package.json'];

/** Blocks this thread for `ms` (a worker waiting for another's build has nothing else to do). */
const block = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function build(into: string): void {
  const staging = mkdtempSync(`${into}.staging-`);
  for (const name of SOURCES) symlinkSync(join(checkout, name), join(staging, name));
  // --preserve-symlinks-main: build.mjs finds its root from its own path, the symlink's.
  const r = spawnSync(process.execPath, ['--preserve-symlinks-main', join(staging, 'scripts', 'build.mjs')], { encoding: 'utf8' });
  if (r.status !== 0) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(`scripts/build.mjs failed: ${r.stderr}`);
  }
  // Complete or absent: a file never sees half a build.
  renameSync(staging, into);
}

/** The root of the run's build of the service (its dist/ is the build); builds it on first use. */
export function builtService(timeoutMs = 120_000): string {
  // Outside a jest run (no run folder): a root of this process's own.
  const run = process.env[RUN_MARKER] ?? mkdtempSync(join(tmpdir(), 'blog-api-build-'));
  const root = join(run, 'service');
  const lock = join(run, 'service.lock');
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(root)) {
    try {
      mkdirSync(lock);
    } catch {
      // Another worker builds: wait for it, or take over if it died meanwhile.
      let owner = 0;
      try {
        owner = Number(readFileSync(join(lock, 'pid'), 'utf8'));
      } catch { /* not written yet, or the lock is gone */ }
      if (owner && !alive(owner)) rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for another worker's build of the service (${lock})`);
      block(50);
      continue;
    }
    try {
      writeFileSync(join(lock, 'pid'), String(process.pid));
      if (!existsSync(root)) build(root);
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
  return root;
}
