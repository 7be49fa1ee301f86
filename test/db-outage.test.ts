import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../src/db/embedded';
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { createServer } from 'node:net';
import { Client } from 'pg';
import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig } from '../mikro-orm.config';
import { until } from './support/wait';
import { isConnectionError, isUniqueViolation, toAppError } from '../src/core/errors';

/**
 * The database goes away under a running service and comes back on the same address: while it
 * is gone every request that needs it answers 503 `Service unavailable` (GraphQL:
 * SERVICE_UNAVAILABLE) and /readyz 503, never a 500; once it is back the same process serves
 * 200 again, because the pool throws away dead connections and opens new ones.
 */
jest.setTimeout(120_000);

let dir: string;
let pg: EmbeddedPostgres;
let app: TestApp;
let api: ReturnType<typeof clients>;
let token: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'blog-api-outage-'));
  chmodSync(dir, 0o755); // as root PostgreSQL runs as `postgres`, who must reach the cluster
  pg = await startEmbeddedPostgres({ dataDir: dir });
  app = await startTestApp({ DATABASE_URL: pg.url });
  api = clients(app.url);
  ({ token } = await buildUser(app, { name: 'Outage' }));
});

afterAll(async () => {
  await app?.close().catch(() => undefined);
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const port = () => Number(new URL(pg.url).port);
const OUTAGE_TITLE = 'Written during the outage';

/** Requests that each need the database, on both surfaces. */
async function probe() {
  const [ready, me, gqlMe] = await Promise.all([
    api.rest('GET', '/readyz'),
    api.rest('GET', '/auth/me', { token }),
    api.gql('{ me { id name } }', undefined, { token }),
  ]);
  return { ready, me, gqlMe };
}

/** The probe's answers once every request succeeds again (the database is back). */
const recovered = () => until(async () => {
  const r = await probe();
  return r.ready.status === 200 && r.me.status === 200 && !r.gqlMe.errors && r;
}, 'every probe to succeed again');

function expectUnavailable(r: Awaited<ReturnType<typeof probe>>) {
  expect(r.ready.status).toBe(503);
  expect(r.ready.body).toEqual({ message: 'Service unavailable' });
  expect(r.me.status).toBe(503);
  expect(r.me.body).toEqual({ message: 'Service unavailable' });
  expect(r.gqlMe.status).toBe(200);
  expect(r.gqlMe.errors).toHaveLength(1);
  expect(r.gqlMe.errors![0]).toMatchObject({ message: 'Service unavailable', extensions: { code: 'SERVICE_UNAVAILABLE' } });
}

it('answers 503 while PostgreSQL is down and recovers without a restart when it returns', async () => {
  // Warm the pool so that live connections exist when the server dies under them.
  for (let i = 0; i < 3; i++) {
    const r = await probe();
    expect(r.ready.status).toBe(200);
    expect(r.me.status).toBe(200);
    expect(r.gqlMe.data).toEqual({ me: { id: expect.any(Number), name: 'Outage' } });
  }
  const address = port();

  await pg.stop();

  // First the pooled connections that PostgreSQL terminated, then new connections refused.
  for (let i = 0; i < 3; i++) expectUnavailable(await probe());

  // A burst larger than the pool: queued acquisitions must fail the same way, not as 500s.
  const burst = await Promise.all(Array.from({ length: 25 }, () => api.rest('GET', '/auth/me', { token })));
  for (const r of burst) expect({ status: r.status, body: r.body }).toEqual({ status: 503, body: { message: 'Service unavailable' } });

  // Writes on both surfaces: 503 like reads, and nothing is left behind once the database is back.
  const rest = await api.rest('POST', '/posts', { token, body: { title: OUTAGE_TITLE, body: 'b' } });
  expect({ status: rest.status, body: rest.body }).toEqual({ status: 503, body: { message: 'Service unavailable' } });
  const graphql = await api.gql(`mutation($t: String!) { createPost(title: $t, body: "b") { id } }`, { t: OUTAGE_TITLE }, { token });
  expect(graphql.status).toBe(200);
  expect(graphql.data ?? null).toBeNull();
  expect(graphql.errors).toHaveLength(1);
  expect(graphql.errors![0]).toMatchObject({ message: 'Service unavailable', extensions: { code: 'SERVICE_UNAVAILABLE' } });

  // Requests that do not need the database still work.
  expect((await api.rest('GET', '/healthz')).status).toBe(200);
  expect((await api.rest('GET', '/auth/me')).status).toBe(401);

  pg = await startEmbeddedPostgres({ dataDir: dir, port: address });
  expect(port()).toBe(address);

  const back = await recovered();
  expect(back.ready.status).toBe(200);
  expect(back.ready.body).toEqual({ status: 'ready' });
  expect(back.me.status).toBe(200);
  expect(back.me.body).toMatchObject({ name: 'Outage' });
  expect(back.gqlMe.errors).toBeUndefined();
  expect(back.gqlMe.data).toEqual({ me: { id: expect.any(Number), name: 'Outage' } });

  expect(await app.orm.em.fork().getConnection().execute('select id from posts where title = ?', [OUTAGE_TITLE])).toEqual([]);
  // The same write now succeeds, on both surfaces.
  expect((await api.rest('POST', '/posts', { token, body: { title: OUTAGE_TITLE, body: 'b' } })).status).toBe(201);
  const created = await api.gql(`mutation($t: String!) { createPost(title: $t, body: "b") { id } }`, { t: OUTAGE_TITLE }, { token });
  expect(created.errors).toBeUndefined();
  expect(await app.orm.em.fork().getConnection().execute('select id from posts where title = ?', [OUTAGE_TITLE])).toHaveLength(2);

  // Every later request succeeds too: no dead connection is left in the pool.
  for (let i = 0; i < 10; i++) {
    const r = await probe();
    expect([r.ready.status, r.me.status]).toEqual([200, 200]);
    expect(r.gqlMe.errors).toBeUndefined();
  }
});

it('a stop in the middle of traffic produces only 200s (201s for creates) and 503s', async () => {
  const statuses = new Set<number>();
  const codes = new Set<string>();
  let running = true;
  const writes = new Set<number>();
  const traffic = (async () => {
    while (running) {
      // A create too: its slug lock and insert share one transaction that the stop may cut.
      const [r, w] = await Promise.all([probe(), api.rest('POST', '/posts', { token, body: { title: 'Traffic', body: 'b' } })]);
      statuses.add(r.ready.status).add(r.me.status).add(r.gqlMe.status);
      writes.add(w.status);
      for (const e of r.gqlMe.errors ?? []) codes.add(String(e.extensions?.code));
    }
  })();
  await until(() => statuses.has(200) && writes.has(201), 'the traffic to be answered before the stop');
  const address = port();
  await pg.stop();
  await until(() => statuses.has(503) && writes.has(503), 'the traffic to be refused while the database is down');
  pg = await startEmbeddedPostgres({ dataDir: dir, port: address });
  await recovered();
  running = false;
  await traffic;
  expect([...statuses].sort()).toEqual([200, 503]);
  expect([...writes].sort()).toEqual([201, 503]);
  expect([...codes]).toEqual(['SERVICE_UNAVAILABLE']);
  const r = await probe();
  expect([r.ready.status, r.me.status, r.gqlMe.status]).toEqual([200, 200, 200]);
});

/**
 * A transaction whose server connection dies: its ROLLBACK fails too, and the pool must still get
 * the connection back (to drop it). Kysely before 0.29.9 released it only after a successful
 * ROLLBACK (kysely-org/kysely#1990): every transaction an outage cut kept a pool slot until the
 * pool was full, and closing the ORM waited for them forever.
 */
it('a transaction whose connection dies gives the connection back to the pool', async () => {
  // An ORM of its own: its pool serves nobody else (the app's jobs poll through the app's).
  const orm = await MikroORM.init(ormConfig({ clientUrl: pg.url, poolMax: 2 }));
  try {
    const em = orm.em.fork();
    const pool = (await em.getConnection().getNativeClient()) as { totalCount: number; idleCount: number };
    await em.begin();
    const [{ pid }] = await em.execute<{ pid: number }[]>('select pg_backend_pid() as pid');
    await app.orm.em.fork().execute('select pg_terminate_backend(?)', [pid]);
    // 57P01 when the statement meets the termination, "not queryable" when pg saw it first.
    const failed = await em.execute('select 1').then(() => null, (err: unknown) => err);
    const rollback = await em.rollback().then(() => null, (err: unknown) => err);
    expect([failed, rollback].map((e) => e !== null && isConnectionError(e))).toEqual([true, true]);
    expect(pool.totalCount - pool.idleCount).toBe(0);
  } finally {
    await orm.close(true);
  }
});

it('a database that hangs instead of refusing: /readyz says 503 within seconds, and all is well once it resumes', async () => {
  expect((await api.rest('GET', '/readyz')).status).toBe(200);
  // SIGSTOP every PostgreSQL process of this cluster: sockets stay open, nothing answers.
  const postmaster = Number(readFileSync(join(pg.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = execFileSync('pgrep', ['-P', String(postmaster)], { encoding: 'utf8' }).trim().split('\n').map(Number);
  const pids = [postmaster, ...children];
  pids.forEach((pid) => process.kill(pid, 'SIGSTOP'));
  try {
    // Without the readiness timeout this request would wait until PostgreSQL resumes (never, here).
    const ready = await api.rest('GET', '/readyz');
    expect({ status: ready.status, body: ready.body }).toEqual({ status: 503, body: { message: 'Service unavailable' } });
  } finally {
    pids.forEach((pid) => process.kill(pid, 'SIGCONT'));
  }
  const back = await recovered();
  expect([back.ready.status, back.me.status]).toEqual([200, 200]);
});

/**
 * A pool with every connection busy: the next statement waits for the acquire timeout and fails.
 * Taken from the ORM as it throws it, raw (a transaction that cannot begin) and converted (a
 * statement), so the check follows whatever the driver layer under MikroORM names it.
 */
it('a full pool: the acquire timeout, as the ORM throws it, answers 503', async () => {
  const config = ormConfig({ clientUrl: pg.url, poolMax: 1 });
  // pg's connectionTimeoutMillis also bounds the wait for a free connection of the pool.
  const orm = await MikroORM.init({ ...config, driverOptions: { ...(config.driverOptions as object), connectionTimeoutMillis: 200 } });
  try {
    const connection = orm.em.getConnection();
    // The pool's one connection, opened first (within 200 ms too, which a busy machine may need
    // more than one try for) and then idle in the pool: what follows waits only for it to be free.
    await until(() => connection.execute('select 1').then(() => true, () => false), 'the pool\'s one connection to open');
    const seen: unknown[] = [];
    await connection.transactional(async () => {
      seen.push(await orm.em.fork().execute('select 1').then(() => null, (err: unknown) => err));
      seen.push(await connection.transactional(async () => undefined).then(() => null, (err: unknown) => err));
    });
    expect(seen.map((e) => e !== null && isConnectionError(e))).toEqual([true, true]);
    expect(seen.map((e) => toAppError(e))).toMatchObject([{ status: 503, message: 'Service unavailable' }, { status: 503, message: 'Service unavailable' }]);
  } finally {
    await orm.close(true);
  }
});

describe('isConnectionError knows what the drivers throw when the database is unreachable', () => {
  // Seen above against a real PostgreSQL: 57P01 (terminated), 57P03 (starting up), ECONNREFUSED.
  // These come from a database that hangs or is saturated rather than stopped.
  it.each([
    ['pg connect timeout', new Error('Connection terminated due to connection timeout')],
    ['pg connection lost', new Error('Connection terminated unexpectedly')],
    ['pg client broken', new Error('Client has encountered a connection error and is not queryable')],
    ['too many connections', Object.assign(new Error('sorry, too many clients already'), { code: '53300' })],
    ['wrapped in a cause', new Error('query failed', { cause: Object.assign(new Error('x'), { code: 'ECONNRESET' }) })],
    ['several addresses refused', new AggregateError([Object.assign(new Error('connect'), { code: 'ECONNREFUSED' })], '')],
    ['pg-pool acquire timeout', new Error('timeout exceeded when trying to connect')],
  ])('%s → 503', (_name, err) => {
    expect(isConnectionError(err)).toBe(true);
    expect(toAppError(err)).toMatchObject({ status: 503, message: 'Service unavailable' });
  });

  it.each([
    ['unique violation', Object.assign(new Error('duplicate key value violates unique constraint "users_email_unique"'), { code: '23505' })],
    ['syntax error', Object.assign(new Error('syntax error at or near "selec"'), { code: '42601' })],
    ['plain bug', new TypeError('x is undefined')],
  ])('%s is not a connection error', (_name, err) => {
    expect(isConnectionError(err)).toBe(false);
  });
});

/**
 * The errors as a real PostgreSQL and pg give them, raw and as MikroORM converts them (its
 * exceptions copy the driver error's `code` and `constraint`): they are told apart by SQLSTATE
 * or errno code, not by their wording.
 */
describe('database errors are told apart by their codes', () => {
  // The driver's converter, as the ORM applies it (MikroORM connects on its first statement: this one runs none).
  let orm: MikroORM;
  beforeAll(async () => void (orm = await MikroORM.init(ormConfig({ clientUrl: pg.url }))));
  afterAll(() => orm.close(true));
  const converter = { convertException: (err: Error) => orm.em.getDriver().convertException(err) };
  const client = async () => {
    const c = new Client({ connectionString: pg.url });
    c.on('error', () => undefined); // a terminated session also reports on the client itself
    await c.connect();
    return c;
  };
  const failure = (p: Promise<unknown>) => p.then(() => { throw new Error('expected a failure'); }, (err: unknown) => err as Error & { code?: string; constraint?: string });
  const asUnavailable = (err: Error) => {
    for (const e of [err, converter.convertException(err)]) {
      expect(isConnectionError(e)).toBe(true);
      expect(toAppError(e)).toMatchObject({ status: 503, message: 'Service unavailable' });
    }
  };

  it('a statement cut by statement_timeout (57014) → 503', async () => {
    const c = await client();
    try {
      await c.query('SET statement_timeout = 50');
      const err = await failure(c.query('SELECT pg_sleep(5)'));
      expect(err.code).toBe('57014');
      asUnavailable(err);
    } finally {
      await c.end();
    }
  });

  it('a session terminated by the server (57P01) → 503', async () => {
    const [victim, admin] = [await client(), await client()];
    try {
      const pid = (await victim.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      const running = failure(victim.query('SELECT pg_sleep(5)'));
      await until(async () => (await admin.query("select 1 from pg_stat_activity where pid = $1 and state = 'active' and query like '%pg_sleep%'", [pid])).rowCount, 'the victim\'s pg_sleep to run');
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      const err = await running;
      expect(err.code).toBe('57P01');
      asUnavailable(err);
    } finally {
      await victim.end().catch(() => undefined);
      await admin.end();
    }
  });

  it('a refused connection (ECONNREFUSED, no SQLSTATE) → 503', async () => {
    const free = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = s.address() as { port: number };
        s.close(() => resolve(p));
      });
    });
    const url = new URL(pg.url);
    url.hostname = '127.0.0.1';
    url.port = String(free);
    const err = await failure(new Client({ connectionString: url.toString() }).connect());
    expect(err.code).toBe('ECONNREFUSED');
    asUnavailable(err);
  });

  it('a unique violation (23505) names its constraint; it is the caller\'s data (422), not an outage', async () => {
    const c = await client();
    try {
      await c.query('CREATE TEMP TABLE codes_seen (v int CONSTRAINT codes_seen_v_unique UNIQUE)');
      await c.query('INSERT INTO codes_seen VALUES (1)');
      const err = await failure(c.query('INSERT INTO codes_seen VALUES (1)'));
      expect([err.code, err.constraint]).toEqual(['23505', 'codes_seen_v_unique']);
      const converted = converter.convertException(err);
      expect(converted.name).toBe('UniqueConstraintViolationException');
      for (const e of [err, converted]) {
        expect(isUniqueViolation(e)).toBe(true);
        expect(isUniqueViolation(e, 'codes_seen_v_unique')).toBe(true);
        expect(isUniqueViolation(e, 'users_email_unique')).toBe(false);
        expect(isConnectionError(e)).toBe(false);
        expect(toAppError(e)).toMatchObject({ status: 422 });
      }
    } finally {
      await c.end();
    }
  });
});
