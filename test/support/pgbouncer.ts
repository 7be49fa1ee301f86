import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from './wait';

/**
 * Debian's PgBouncer in transaction mode in front of a PostgreSQL, as a deployment on a managed
 * database runs it (docs/deploy.md shows the same settings): every database of the server under
 * its own name, a small pool per database (two server connections), so consecutive transactions
 * of one client land on different server connections, and the client connections many.
 * Started as the `postgres` user when the tests run as root (PgBouncer refuses root).
 */
const PGBOUNCER = '/usr/sbin/pgbouncer';

export interface Pooler {
  /** `server`'s URL with the pooler's host and port: the same database, through the pool. */
  pooled(server: string): string;
  stop(): Promise<void>;
}

/** Why the pooler tests cannot run here, or null when they can. */
export function poolerMissing(): string | null {
  return existsSync(PGBOUNCER) ? null : `${PGBOUNCER} is absent (Debian: apt-get install -y pgbouncer)`;
}

/**
 * `describe` when PgBouncer is installed, else `describe.skip` with the reason in the title and
 * said once in the run's output (.ci/run installs it).
 */
export function describeWithPooler(file: string, title: string, suite: () => void): void {
  const missing = poolerMissing();
  if (!missing) return describe(title, suite);
  process.stderr.write(`${file} skipped: ${missing}\n`);
  describe.skip(`${title} (skipped: ${missing})`, suite);
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });

/** Starts PgBouncer in front of the server `serverUrl` (any database on it), ready to connect. */
export async function startPgBouncer(serverUrl: string, { poolSize = 2 } = {}): Promise<Pooler> {
  const server = new URL(serverUrl);
  const dir = mkdtempSync(join(tmpdir(), 'blog-api-pgbouncer-'));
  const port = await freePort();
  const user = decodeURIComponent(server.username || 'postgres');
  writeFileSync(join(dir, 'users.txt'), `"${user}" ""\n`);
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      // PgBouncer logs in to the server itself, with the server URL's credentials.
      `* = host=${server.hostname} port=${server.port} user=${user}${server.password ? ` password=${decodeURIComponent(server.password)}` : ''}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      'min_pool_size = 0',
      'reserve_pool_size = 0',
      'max_client_conn = 500',
      // What pg sends on its own when it opens a connection and PgBouncer does not track.
      'ignore_startup_parameters = extra_float_digits',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  const asPostgres = process.getuid?.() === 0;
  if (asPostgres) {
    const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    chmodSync(dir, 0o755);
    for (const f of ['', 'users.txt', 'pgbouncer.ini']) chownSync(join(dir, f), uid, gid);
  }
  const args = [join(dir, 'pgbouncer.ini')];
  const child: ChildProcess = asPostgres ? spawn('runuser', ['-u', 'postgres', '--', PGBOUNCER, ...args], { stdio: 'ignore' }) : spawn(PGBOUNCER, args, { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = (database: string) => {
    const u = new URL(serverUrl);
    u.port = String(port);
    u.pathname = `/${database}`;
    return u.toString();
  };
  await listening(port, () => child.exitCode !== null);
  return {
    pooled: (s) => url(new URL(s).pathname.slice(1)),
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves once PgBouncer accepts connections on `port`; throws if it exits first. */
async function listening(port: number, exited: () => boolean): Promise<void> {
  await until(async () => {
    if (exited()) throw new Error('PgBouncer exited');
    return new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => socket.end(() => resolve(true)));
      socket.once('error', () => resolve(false));
    });
  }, `PgBouncer to listen on ${port}`, { ms: 10_000 });
}
