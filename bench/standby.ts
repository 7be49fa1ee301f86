import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, chownSync, unlinkSync, writeFileSync } from 'node:fs';
import { Client } from 'pg';
import { freePort, postgresBinaries } from '../src/db/embedded';

/**
 * A hot standby of a running embedded primary (the embedded binaries have no pg_basebackup): a
 * copy of the primary's data directory taken inside the low-level backup API, its backup_label,
 * standby.signal and primary_conninfo, started on its own port. Used by `npm run bench:scale`
 * and by the replica tests (test/support/replica.ts); it lives here because the bench is built
 * to dist/ (scripts/build.mjs compiles src, scripts and bench, not test).
 */
export interface Standby {
  /** The `postgres` database on the standby (swap the path for another database). */
  url: string;
  /** The standby's postmaster, whose process tree's CPU the bench reads from /proc. */
  pid: number;
  stop(): Promise<void>;
}

const READY = 'database system is ready to accept read-only connections';

export interface StandbyOptions {
  /** application_name on the primary, and the backup's label. */
  name?: string;
  /** More server settings (`-c key=value`). */
  settings?: Record<string, string>;
}

export async function startStandby(primary: { url: string; dataDir: string }, standbyDir: string, opts: StandbyOptions = {}): Promise<Standby> {
  const name = opts.name ?? 'standby';
  const { binDir, owner } = postgresBinaries();
  const primaryUrl = new URL(primary.url);
  const admin = new Client({ connectionString: primary.url });
  await admin.connect();
  try {
    await admin.query('select pg_backup_start($1, true)', [name]);
    const copy = spawnSync('cp', ['-a', primary.dataDir, standbyDir], { encoding: 'utf8' });
    if (copy.status !== 0) throw new Error(`copying the data directory failed: ${copy.stderr}`);
    for (const f of ['postmaster.pid', 'postmaster.opts']) {
      try { unlinkSync(`${standbyDir}/${f}`); } catch { /* not there */ }
    }
    const { rows } = await admin.query<{ labelfile: string; spcmapfile: string }>('select labelfile, spcmapfile from pg_backup_stop(false)');
    writeFileSync(`${standbyDir}/backup_label`, rows[0].labelfile);
    if (rows[0].spcmapfile) writeFileSync(`${standbyDir}/tablespace_map`, rows[0].spcmapfile);
  } finally {
    await admin.end();
  }
  writeFileSync(`${standbyDir}/standby.signal`, '');
  appendFileSync(
    `${standbyDir}/postgresql.auto.conf`,
    `primary_conninfo = 'host=127.0.0.1 port=${primaryUrl.port} user=postgres password=${decodeURIComponent(primaryUrl.password)} application_name=${name}'\n`,
  );
  if (owner) for (const f of ['backup_label', 'tablespace_map', 'standby.signal', 'postgresql.auto.conf']) {
    try { chownSync(`${standbyDir}/${f}`, owner.uid, owner.gid); } catch { /* tablespace_map may not exist */ }
  }

  const port = await freePort();
  // max_connections as the primary's (a standby needs at least the primary's value).
  const child: ChildProcess = spawn(
    `${binDir}/postgres`,
    ['-D', standbyDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=',
      '-c', 'max_connections=200', ...Object.entries(opts.settings ?? {}).flatMap(([k, v]) => ['-c', `${k}=${v}`])],
    { ...(owner ?? {}), detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } },
  );
  let log = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`standby not ready after 60 s:\n${log}`)), 60_000);
      child.stderr!.on('data', (c: Buffer) => {
        log += c.toString();
        if (log.includes(READY)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`standby exited (${code}):\n${log}`));
      });
    });
  } catch (err) {
    child.kill('SIGINT');
    throw err;
  }
  child.removeAllListeners('exit');
  child.stderr!.removeAllListeners('data');
  child.stderr!.resume();

  const url = new URL(primary.url);
  url.port = String(port);
  let stopped: Promise<void> | undefined;
  return {
    url: url.toString(),
    pid: child.pid!,
    stop: () =>
      (stopped ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGINT');
      })),
  };
}

/** Waits until the standby has replayed everything the primary has written so far. */
export async function caughtUp(primaryUrl: string, standbyUrl: string, timeoutMs = 60_000, pollMs = 100): Promise<void> {
  const p = new Client({ connectionString: primaryUrl });
  const s = new Client({ connectionString: standbyUrl });
  await Promise.all([p.connect(), s.connect()]);
  try {
    const { rows } = await p.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn');
    for (const deadline = Date.now() + timeoutMs; ; await new Promise((r) => setTimeout(r, pollMs))) {
      const { rows: r } = await s.query<{ ok: boolean }>('select pg_last_wal_replay_lsn() >= $1::pg_lsn as ok', [rows[0].lsn]);
      if (r[0].ok) return;
      if (Date.now() > deadline) throw new Error('the standby did not catch up');
    }
  } finally {
    await Promise.all([p.end(), s.end()]);
  }
}
