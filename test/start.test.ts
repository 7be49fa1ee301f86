import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { builtServerStarts } from './support/built-start';

/**
 * The real process, as `npm start` runs it: embedded PostgreSQL under DATA_DIR, migrations,
 * listen, then SIGTERM drains and exits 0 leaving no PostgreSQL behind; a second start finds
 * the data again; a start that cannot listen leaves nothing running; the thread pool's priority.
 * How it drains (in-flight requests, a handler whose client hung up, the cut at
 * SHUTDOWN_TIMEOUT_MS, open subscriptions): test/start-drain.test.ts.
 */
const built = builtServerStarts();

it('starts, serves, drains on SIGTERM with exit 0, and finds its data on the next start', async () => {
  const first = built.start();
  await first.ready;
  const port = first.port();
  expect(first.output()).toContain(`"graphql":"http://localhost:${port}/graphql"`);
  expect(first.output()).toContain(`"health":"http://localhost:${port}/healthz"`);
  expect(first.output()).toContain(`"rest":"http://localhost:${port}/"`);

  const db = built.clusterClient();
  await db.connect();
  await db.query(`insert into users (name, email, password, created_at, updated_at) values ('Kept', 'kept@example.test', 'x', now(), now())`);
  await db.end();

  first.child.kill('SIGTERM');
  expect(await first.exited).toBe(0);
  expect(first.output()).toContain('"msg":"stopped"');
  expect(built.postgresRunning()).toBe(false);

  const second = built.start();
  await second.ready;
  const again = built.clusterClient();
  await again.connect();
  const { rows } = await again.query(`select name from users where email = 'kept@example.test'`);
  await again.end();
  expect(rows).toEqual([{ name: 'Kept' }]);
  second.child.kill('SIGINT');
  expect(await second.exited).toBe(0);
  expect(built.postgresRunning()).toBe(false);
  expect(existsSync(join(built.dataDir(), 'jwt-secret'))).toBe(true);
}, 90_000);

it('a port already in use stops the start with a message saying so, exit 1, and no PostgreSQL left running', async () => {
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, '0.0.0.0', () => r()));
  const { port } = taken.address() as AddressInfo;
  try {
    const server = built.start({ PORT: String(port) });
    expect(await server.exited).toBe(1);
    expect(server.output()).toContain(`Failed to start: Port ${port} is in use: stop the other process or set PORT.`);
    expect(server.output()).not.toContain('listening on');
    expect(built.postgresRunning()).toBe(false);
  } finally {
    taken.close();
  }
}, 90_000);

it("libuv's thread pool (bcrypt) runs below the event loop's priority; THREADPOOL_NICE=0 leaves it alone", async () => {
  const niceness = (pid: number) =>
    readdirSync(`/proc/${pid}/task`).map((tid) => ({ tid: Number(tid), nice: Number(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ')[16]) }));
  for (const [env, pooled] of [[{}, 10], [{ THREADPOOL_NICE: '0' }, 0]] as const) {
    const server = built.start({ ...env, UV_THREADPOOL_SIZE: '3' });
    await server.ready;
    const tasks = niceness(server.child.pid!);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(tasks.find((t) => t.tid === server.child.pid)?.nice).toBe(0); // the event loop
    expect(tasks.filter((t) => t.nice === 10)).toHaveLength(pooled ? 3 : 0);
    expect(tasks.filter((t) => t.nice !== 0 && t.nice !== 10)).toEqual([]);
  }
}, 90_000);
