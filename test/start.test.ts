import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';

/**
 * The real process, as `npm start` runs it: embedded PostgreSQL under DATA_DIR, migrations,
 * listen, then SIGTERM drains and exits 0 leaving no PostgreSQL behind; a second start finds
 * the data again.
 */
const root = join(__dirname, '..');
let dataDir: string;

beforeAll(() => {
  const build = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { encoding: 'utf8' });
  if (build.status !== 0) throw new Error(build.stderr);
  dataDir = mkdtempSync(join(tmpdir(), 'blog-api-start-'));
  chmodSync(dataDir, 0o755);
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function start(port: number): { child: ChildProcess; output: () => string; ready: Promise<void>; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [join(root, 'dist', 'src', 'main.js')], {
    env: { ...process.env, NODE_ENV: 'development', PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'info', DATABASE_URL: '', JWT_SECRET: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const ready = (async () => {
    for (let i = 0; i < 300; i++) {
      if (child.exitCode !== null) throw new Error(`exited early:\n${out}`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/readyz`);
        if (res.status === 200) return;
      } catch { /* not listening yet */ }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`not ready after 30 s:\n${out}`);
  })();
  return { child, output: () => out, ready, exited };
}

/** The embedded cluster's connection, from the files it keeps (password in DATA_DIR, port in postmaster.pid). */
function clusterClient(): Client {
  const cluster = realpathSync(join(dataDir, 'postgres'));
  const port = Number(readFileSync(join(cluster, 'postmaster.pid'), 'utf8').split('\n')[3]);
  const password = readFileSync(join(dataDir, 'postgres-password'), 'utf8').trim();
  return new Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' });
}

function postgresRunning(): boolean {
  const cluster = realpathSync(join(dataDir, 'postgres'));
  return spawnSync('pgrep', ['-f', `postgres -D ${cluster}`]).status === 0;
}

it('starts, serves, drains on SIGTERM with exit 0, and finds its data on the next start', async () => {
  const port = 40000 + Math.floor(Math.random() * 20000);
  const first = start(port);
  await first.ready;
  expect(first.output()).toContain(`"graphql":"http://localhost:${port}/graphql"`);
  expect(first.output()).toContain(`"health":"http://localhost:${port}/healthz"`);
  expect(first.output()).toContain(`"rest":"http://localhost:${port}/"`);

  const db = clusterClient();
  await db.connect();
  await db.query(`insert into users (name, email, password, created_at, updated_at) values ('Kept', 'kept@example.test', 'x', now(), now())`);
  await db.end();

  first.child.kill('SIGTERM');
  expect(await first.exited).toBe(0);
  expect(first.output()).toContain('"msg":"stopped"');
  expect(postgresRunning()).toBe(false);

  const second = start(port);
  await second.ready;
  const again = clusterClient();
  await again.connect();
  const { rows } = await again.query(`select name from users where email = 'kept@example.test'`);
  await again.end();
  expect(rows).toEqual([{ name: 'Kept' }]);
  second.child.kill('SIGINT');
  expect(await second.exited).toBe(0);
  expect(postgresRunning()).toBe(false);
  expect(existsSync(join(dataDir, 'jwt-secret'))).toBe(true);
}, 90_000);
