import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { sql, untilOneRow } from './support/blog';
import { until } from './support/wait';
import { buildService, removeService, startInstance, stopInstance, type Instance } from './support/instances';

/**
 * Idempotency-Key across real service processes on one database: what decides a repeat lives in
 * PostgreSQL (the advisory lock on the key, the stored row), not in a process, so two instances
 * behave as one; and a process killed after its create wrote but before it answered leaves
 * neither the row nor the key, so the retry runs once. The in-process app only writes the users
 * and signs their tokens (same secret as the instances).
 */
jest.setTimeout(180_000);

const SECRET = 'idempotency-instances-secret-long-enough-to-pass';
const IN_PROGRESS = 'A request with this Idempotency-Key is in progress';

let app: TestApp;
let a: Instance;
let b: Instance;
let token: string;

beforeAll(async () => {
  buildService();
  app = await startTestApp({ JWT_SECRET: SECRET });
  const env = { DATABASE_URL: app.databaseUrl, JWT_SECRET: SECRET, BCRYPT_COST: '4', APP_URL: 'http://app.test' };
  a = startInstance(env);
  b = startInstance(env);
  await Promise.all([a.ready, b.ready]);
  token = (await buildUser(app)).token;
});

afterAll(async () => {
  await Promise.all([stopInstance(a), stopInstance(b)]);
  await app?.close();
  removeService();
});

const unique = () => `Across ${randomBytes(5).toString('hex')}`;
const postsTitled = async (title: string) => Number((await sql(app, 'select count(*) as n from posts where title = ?', [title]))[0].n);

it('10 repeats of one key at once, split across two instances: one row, every 201 byte-identical, the rest 409', async () => {
  for (let round = 0; round < 5; round++) {
    const key = `split-${round}-${randomBytes(4).toString('hex')}`;
    const title = unique();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        clients((i % 2 ? a : b).url()).rest('POST', '/posts', { token, body: { title, body: 'b' }, headers: { 'Idempotency-Key': key } }),
      ),
    );
    const ok = answers.filter((r) => r.status === 201);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((r) => r.text)).size).toBe(1);
    expect(answers.filter((r) => r.status !== 201).every((r) => r.status === 409 && r.body.message === IN_PROGRESS)).toBe(true);
    expect(await postsTitled(title)).toBe(1);
    expect(await sql(app, 'select 1 from idempotency_keys where key = ?', [key])).toHaveLength(1);
  }
});

it('an instance killed (SIGKILL) after the write and before its answer: the retry with the key on the other creates exactly one post', async () => {
  const key = `killed-${randomBytes(4).toString('hex')}`;
  const title = unique();
  // Deterministic stop point: this connection holds an EXCLUSIVE lock on idempotency_keys, which
  // lets the service's lookup (a plain select) through but blocks the statement that reads the
  // answer and stores it (its insert into idempotency_keys), the last of the create's transaction,
  // after the post row was written. The instance
  // is killed while its backend waits there, so it never commits and never answers.
  const blocker = new Client({ connectionString: app.databaseUrl });
  await blocker.connect();
  let pid: number | undefined;
  try {
    await blocker.query('begin');
    await blocker.query('lock table idempotency_keys in exclusive mode');
    const pending = clients(a.url(), { openapi: false }).rest('POST', '/posts', { token, body: { title, body: 'b' }, headers: { 'Idempotency-Key': key } }).catch((err: Error) => err);
    const waiting = await untilOneRow(async () => ({ rows: await sql<{ pid: number }>(app, "select pid from pg_locks where not granted and relation = 'idempotency_keys'::regclass") }), 200);
    pid = waiting?.pid;
    expect(pid).toBeDefined();
    // The post is written (uncommitted) in that transaction: its backend holds the insert's lock on posts.
    const [held] = await sql(app, "select count(*) as n from pg_locks where pid = ? and relation = 'posts'::regclass and mode = 'RowExclusiveLock'", [pid]);
    expect(Number(held.n)).toBe(1);
    a.child.kill('SIGKILL');
    await a.exited;
    // No answer came: the request failed on the closed socket (a fetch error, not a response).
    expect(await pending).toMatchObject({ message: 'fetch failed' });
    await blocker.query('commit');
  } finally {
    await blocker.end();
  }
  // The dead client's backend rolls back once it reads the closed socket; until then it still holds the key's lock (409).
  // The marker: that backend has left pg_stat_activity, which it does after its rollback released the locks.
  await until(async () => (await sql(app, 'select 1 from pg_stat_activity where pid = ?', [pid])).length === 0, "the killed instance's backend to exit");
  const retry = await clients(b.url()).rest('POST', '/posts', { token, body: { title, body: 'b' }, headers: { 'Idempotency-Key': key } });
  expect(retry.status).toBe(201);
  expect(retry.headers.get('idempotent-replayed')).toBeNull();
  const replay = await clients(b.url()).rest('POST', '/posts', { token, body: { title, body: 'b' }, headers: { 'Idempotency-Key': key } });
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  expect(replay.text).toBe(retry.text);
  expect(await postsTitled(title)).toBe(1);
});
