import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { buildPost } from './support/blog';
import { startTestApp, type TestApp } from './support/harness';
import { loadConfig } from '../src/config/config';
import { settled, until as untilCondition } from './support/wait';
import { caughtUp, startStreamingPair, type StreamingPair } from './support/replica';
import { connect, untilSubscribed } from './support/ws';
import { readRoutingOf } from '../src/db/replicas';

/**
 * Reads on a real streaming replica (CONTRACT 15): a standby made by test/support/replica.ts
 * from the embedded PostgreSQL binaries, replaying the primary's WAL. Where reads land is
 * counted from the standby's own statistics, not from the service.
 */
jest.setTimeout(120_000);

let pair: StreamingPair;
let app: TestApp;
let primaryUrl: string;
let standbyUrl: string;
let standby: Client;
let writer: { token: string; userId: number };
let api: ReturnType<typeof clients>;
const ids: number[] = [];

beforeAll(async () => {
  pair = await startStreamingPair();
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: pair.primaryUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  primaryUrl = pair.withDatabase(pair.primaryUrl, name);
  standbyUrl = pair.withDatabase(pair.standbyUrl, name);
  await caughtUp(pair.primaryUrl, pair.standbyUrl);
  app = await startTestApp({ DATABASE_URL: primaryUrl, DATABASE_REPLICA_URLS: standbyUrl, REPLICA_MAX_LAG_MS: '1000' });
  api = clients(app.url); // answers checked against the OpenAPI document (/readyz with replicas)
  const { user, token } = await buildUser(app);
  writer = { token, userId: user.id };
  for (let i = 0; i < 3; i++) ids.push((await buildPost(app, user, { title: `Replicated ${i}` })).id);
  await caughtUp(primaryUrl, standbyUrl);
  standby = new Client({ connectionString: standbyUrl });
  standby.on('error', () => undefined); // cut when the standby stops, in the last test
  await standby.connect();
});

afterAll(async () => {
  await standby?.end();
  await app?.close();
  await pair?.close();
});

/** Transactions committed in the test database on the standby, per its own statistics. */
async function standbyCommits(): Promise<number> {
  await standby.query('select pg_stat_clear_snapshot()');
  const { rows } = await standby.query<{ n: string }>('select xact_commit as n from pg_stat_database where datname = current_database()');
  return Number(rows[0].n);
}

async function poolQueries(pool: string): Promise<number> {
  const text = (await api.rest('GET', '/metrics')).text;
  return Number(new RegExp(`^db_queries_total\\{pool="${pool}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
}
const replicaQueries = () => poolQueries('replica-1');

/** `until` with the label first, as this file reads. */
const until = <T>(label: string, condition: () => Promise<T>, ms = 20_000) => untilCondition(condition, label, { ms, everyMs: 100 });

const readyz = async () => (await api.rest('GET', '/readyz')).body;

it('/readyz lists the replica in use', async () => {
  expect(await readyz()).toEqual({ status: 'ready', replicas: { in_use: ['replica-1'], skipped: [] } });
});

it('anonymous lists and details, on both surfaces, are read on the standby', async () => {
  const before = await standbyCommits();
  const N = 20;
  for (let i = 0; i < N; i++) {
    const list = await api.rest('GET', '/posts');
    expect(list.status).toBe(200);
    expect(list.body.data.map((p: { id: number }) => p.id)).toEqual(expect.arrayContaining(ids));
    expect((await api.rest('GET', `/posts/${ids[i % ids.length]}`)).status).toBe(200);
    const g = await api.gql(`query($id: Int!) { posts { total data { id user { name } } } postsSimple { hasMore } postsCursor { data { id } } post(id: $id) { title } }`, { id: ids[0] });
    expect(g.errors).toBeUndefined();
    expect(g.data.post.title).toBe('Replicated 0');
  }
  // At least one statement per list, detail and query (each its own transaction); the health
  // probes add a few a second, far fewer than these.
  await until('the standby to count the reads', async () => (await standbyCommits()) - before >= 3 * N);
});

it('an authenticated caller reads from the primary: the replica pool gets none of its statements', async () => {
  const before = await replicaQueries();
  const primaryBefore = await poolQueries('primary');
  for (let i = 0; i < 10; i++) {
    expect((await api.rest('GET', '/posts', { token: writer.token })).status).toBe(200);
    expect((await api.rest('GET', `/posts/${ids[0]}`, { token: writer.token })).status).toBe(200);
    expect((await api.gql(`{ posts { total } }`, {}, { token: writer.token })).errors).toBeUndefined();
  }
  // Anonymous but not only post reads (a mutation, here failing validation): the primary too.
  await api.gql(`mutation { login(email: "nobody@example.test", password: "x") { token } }`);
  expect(await replicaQueries()).toBe(before);
  expect(await poolQueries('primary')).toBeGreaterThanOrEqual(primaryBefore + 30);
  // The control: the same read anonymously does reach the replica pool.
  expect((await api.rest('GET', '/posts')).status).toBe(200);
  expect(await replicaQueries()).toBeGreaterThan(before);
});

it('a write followed by the writer’s read sees the write, even while the standby is behind; a standby behind by more than REPLICA_MAX_LAG_MS is skipped', async () => {
  await standby.query('select pg_wal_replay_pause()');
  try {
    const created = await api.rest('POST', '/posts', { token: writer.token, body: { title: 'Fresh', body: 'just written' } });
    expect(created.status).toBe(201);
    const mine = await api.rest('GET', `/posts/${created.body.id}`, { token: writer.token });
    expect([mine.status, mine.body.title]).toEqual([200, 'Fresh']);
    const list = await api.rest('GET', `/posts?author=${writer.userId}`, { token: writer.token });
    expect(list.body.data[0].id).toBe(created.body.id);
    const g = await api.gql(`query($id: Int!) { post(id: $id) { title } }`, { id: created.body.id }, { token: writer.token });
    expect(g.data).toEqual({ post: { title: 'Fresh' } });
    // The standby has not replayed it:
    expect((await standby.query('select id from posts where id = $1', [created.body.id])).rows).toEqual([]);

    await until('the lagging replica to be skipped', async () => (await readyz()).replicas.in_use.length === 0);
    expect(await readyz()).toEqual({ status: 'ready', replicas: { in_use: [], skipped: [{ name: 'replica-1', reason: 'lagging' }] } });
    // Skipped: anonymous reads fall back to the primary and see the new post.
    const anon = await api.rest('GET', `/posts/${created.body.id}`);
    expect([anon.status, anon.body.title]).toEqual([200, 'Fresh']);
  } finally {
    await standby.query('select pg_wal_replay_resume()');
  }
  await until('the replica back in use', async () => (await readyz()).replicas.in_use.length === 1);
});

it('a subscription delivery reads from the primary: a post the standby in use has not replayed still reaches an anonymous subscriber', async () => {
  // A patient instance keeps the paused standby in use, so its anonymous reads do land behind.
  const patient = await startTestApp({ DATABASE_URL: primaryUrl, DATABASE_REPLICA_URLS: standbyUrl, REPLICA_MAX_LAG_MS: '600000' });
  const papi = clients(patient.url);
  const conn = connect(patient);
  try {
    await until('the patient instance to use the replica', async () => (await papi.rest('GET', '/readyz')).body.replicas.in_use.length === 1);
    const sub = conn.subscribe(`subscription { postPublished { id title } }`);
    await untilSubscribed(patient, 1);
    await standby.query('select pg_wal_replay_pause()');
    try {
      const created = await papi.rest('POST', '/posts', { token: writer.token, body: { title: 'Unreplayed', body: 'x' } });
      expect((await papi.rest('PATCH', `/posts/${created.body.id}/publish`, { token: writer.token })).status).toBe(200);
      // The NOTIFY came after the commit on the primary; an anonymous read there would miss the post:
      expect((await papi.rest('GET', `/posts/${created.body.id}`)).status).toBe(404);
      const first = await settled(sub.nth(0), 'the first delivery', 10_000);
      expect(first).toEqual({ data: { postPublished: { id: created.body.id, title: 'Unreplayed' } } });
    } finally {
      await standby.query('select pg_wal_replay_resume()');
    }
  } finally {
    await conn.dispose();
    await patient.close();
  }
  await until('the replica back in use', async () => (await readyz()).replicas.in_use.length === 1);
});

it('MikroORM picks among the replicas; a read it hands to a skipped one runs on the primary, and the replica in use still takes its share', async () => {
  const down = new URL(standbyUrl);
  down.port = '1'; // nothing listens there
  const two = await startTestApp({ DATABASE_URL: primaryUrl, DATABASE_REPLICA_URLS: `${standbyUrl},${down}` });
  try {
    const tapi = clients(two.url);
    const skippedSecond = { status: 'ready', replicas: { in_use: ['replica-1'], skipped: [{ name: 'replica-2', reason: 'down' }] } };
    await until('replica-1 in use, replica-2 skipped', async () => JSON.stringify((await tapi.rest('GET', '/readyz')).body) === JSON.stringify(skippedSecond));
    for (let i = 0; i < 20; i++) expect((await tapi.rest('GET', `/posts/${ids[i % ids.length]}`)).status).toBe(200);
    const text = (await tapi.rest('GET', '/metrics')).text;
    const count = (pool: string) => Number(new RegExp(`^db_queries_total\\{pool="${pool}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
    // One statement per detail, and MikroORM picks at random: replica-1 gets none, or all, of
    // the 20 once in a million runs; those it handed to replica-2 went to the primary.
    expect(count('replica-1')).toBeGreaterThan(0);
    expect(count('replica-1')).toBeLessThan(20);
    expect(count('replica-2')).toBe(0);
  } finally {
    await two.close();
  }
});

it('a read the standby cancels for a recovery conflict (40001) runs again on the primary, and the caller sees its answer', async () => {
  // The standby cancels a query in the way of its replay at once, instead of holding the replay back.
  const standbyAdmin = new Client({ connectionString: pair.standbyUrl });
  await standbyAdmin.connect();
  const primaryAdmin = new Client({ connectionString: primaryUrl });
  await primaryAdmin.connect();
  try {
    await standbyAdmin.query('alter system set max_standby_streaming_delay = 0');
    await standbyAdmin.query('select pg_reload_conf()');
    await until('the standby to apply the setting', async () => (await standbyAdmin.query('show max_standby_streaming_delay')).rows[0].max_standby_streaming_delay === '0');
    await until('replica-1 in use', async () => JSON.stringify((await readyz()).replicas?.in_use) === '["replica-1"]');
    const routing = readRoutingOf(app.orm)!;
    const tried: Array<{ on: string; code?: string }> = [];
    // On the standby the read holds its lock on posts for seconds; on the primary it answers at once.
    const read = routing.read(app.orm.em.fork(), async (conn, target) => {
      try {
        const [row] = await conn.execute<{ standby: boolean }[]>("select pg_sleep(case when pg_is_in_recovery() then 10 else 0 end), pg_is_in_recovery() as standby from posts where title = 'Replicated 0'");
        tried.push({ on: target.name });
        return row;
      } catch (err) {
        tried.push({ on: target.name, code: (err as { code?: string }).code });
        throw err;
      }
    });
    await until('the read to run on the standby', async () => (await standbyAdmin.query(`select 1 from pg_stat_activity where query like '%pg_sleep(case when pg_is_in_recovery()%' and pid <> pg_backend_pid()`)).rowCount);
    // An ACCESS EXCLUSIVE lock on posts, replayed by the standby: it conflicts with the read there.
    await primaryAdmin.query('begin; lock table posts in access exclusive mode; commit');
    const started = Date.now();
    expect(await read).toEqual({ pg_sleep: '', standby: false });
    expect(tried).toEqual([{ on: 'replica-1', code: '40001' }, { on: 'primary' }]);
    expect(Date.now() - started).toBeLessThan(5_000);
  } finally {
    await standbyAdmin.query('alter system reset max_standby_streaming_delay').catch(() => undefined);
    await standbyAdmin.query('select pg_reload_conf()').catch(() => undefined);
    await standbyAdmin.end();
    await primaryAdmin.end();
  }
});

it('stopping the standby mid-traffic costs no failed request; /readyz then lists no replica in use', async () => {
  const statuses: number[] = [];
  const errors: unknown[] = [];
  let stop = false;
  const reader = async () => {
    while (!stop) {
      const rest = await api.rest('GET', '/posts');
      statuses.push(rest.status);
      const detail = await api.rest('GET', `/posts/${ids[1]}`);
      statuses.push(detail.status);
      const g = await api.gql(`{ postsSimple { data { id comments { id } } } }`);
      statuses.push(g.status);
      if (g.errors) errors.push(g.errors);
    }
  };
  const readers = Promise.all([reader(), reader(), reader()]);
  await until('the readers to be served by the replica', async () => statuses.length > 0 && (await replicaQueries()) > 0);
  const servedBefore = await replicaQueries();
  expect(servedBefore).toBeGreaterThan(0);
  await pair.stopStandby();
  // Reads go on through the stop: the replica is found down, and every reader completes rounds after that.
  await until('the replica to be found down', async () => JSON.stringify((await readyz()).replicas.skipped) === JSON.stringify([{ name: 'replica-1', reason: 'down' }]));
  const seenDown = statuses.length;
  await until('two more rounds of every reader (and over 30 reads in all)', async () => statuses.length >= Math.max(seenDown + 2 * 3 * 3, 33));
  stop = true;
  await readers;
  expect(statuses.length).toBeGreaterThan(30);
  expect(statuses.filter((s) => s !== 200)).toEqual([]);
  expect(errors).toEqual([]);
  expect(await readyz()).toEqual({ status: 'ready', replicas: { in_use: [], skipped: [{ name: 'replica-1', reason: 'down' }] } });
  expect((await api.rest('GET', '/metrics')).text).toMatch(/^db_replica_in_use\{pool="replica-1"\} 0$/m);
  // The primary carries the reads from here on, still 200.
  expect((await api.rest('GET', '/posts')).status).toBe(200);
});

it('an instance started while its replica is down starts, serves every read from the primary, and says so', async () => {
  const second = await startTestApp({ DATABASE_URL: primaryUrl, DATABASE_REPLICA_URLS: standbyUrl });
  try {
    const other = clients(second.url);
    expect((await other.rest('GET', '/readyz')).body).toEqual({ status: 'ready', replicas: { in_use: [], skipped: [{ name: 'replica-1', reason: 'down' }] } });
    expect((await other.rest('GET', '/posts')).status).toBe(200);
    expect((await other.gql(`{ posts { total } }`)).errors).toBeUndefined();
  } finally {
    await second.close();
  }
});

it('settings: DATABASE_REPLICA_URLS takes comma-separated URLs and needs DATABASE_URL; REPLICA_MAX_LAG_MS defaults to 1000', () => {
  const base = { DATABASE_URL: 'postgres://u:p@db:5432/blog' };
  expect(loadConfig({ ...base, DATABASE_REPLICA_URLS: ' postgres://u:p@r1:5432/blog , postgres://u:p@r2:5432/blog,' })).toMatchObject({
    replicaUrls: ['postgres://u:p@r1:5432/blog', 'postgres://u:p@r2:5432/blog'],
    replicaMaxLagMs: 1000,
  });
  expect(loadConfig(base)).toMatchObject({ replicaUrls: [] });
  expect(loadConfig({ ...base, REPLICA_MAX_LAG_MS: '250' }).replicaMaxLagMs).toBe(250);
  expect(() => loadConfig({ DATABASE_REPLICA_URLS: 'postgres://u:p@r1:5432/blog' })).toThrow('DATABASE_REPLICA_URLS: needs DATABASE_URL');
  expect(() => loadConfig({ ...base, DATABASE_REPLICA_URLS: 'replica-host' })).toThrow('DATABASE_REPLICA_URLS');
  expect(() => loadConfig({ ...base, REPLICA_MAX_LAG_MS: 'soon' })).toThrow('REPLICA_MAX_LAG_MS: must be a whole number');
});
