import { Client } from 'pg';
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { buildPost, sql } from './support/blog';
import { postJsonSource } from '../src/modules/post/post.repository';
import { readContextOf } from '../src/core/context';

/**
 * A page's `total` is counted once per version of the data (db/list-totals.ts): a page read when
 * nothing changed since the last count takes that count, and any committed change (through the
 * service, another connection, another instance) makes the next page count again. These tests
 * fail the day a page counts on every read, the day a stale total is answered, and the day a
 * flush through the ORM stops forgetting the totals (ListTotalsFlushes: the next page counts in
 * its one statement).
 */
let app: TestApp;
let api: ReturnType<typeof clients>;
let alice: Awaited<ReturnType<typeof buildUser>>;
let bob: Awaited<ReturnType<typeof buildUser>>;

beforeAll(async () => {
  app = await startTestApp();
  api = clients(app.url);
  alice = await buildUser(app, { name: 'Alice' });
  bob = await buildUser(app, { name: 'Bob' });
  for (let i = 0; i < 12; i++) await buildPost(app, i < 8 ? alice.user : bob.user, { published: i % 2 === 0 });
});
afterAll(() => app.close());

/** The statements `run` sent, as SQL (a named statement's text for its `execute`). */
async function statements(run: () => Promise<unknown>): Promise<string[]> {
  app.sql.length = 0;
  await run();
  return [...app.sql];
}
const counting = (lines: string[]) => lines.filter((l) => /count\(\*\)/.test(l));
const livePosts = async () => Number((await sql<{ n: string }>(app, 'select count(*) as n from posts where deleted_at is null'))[0].n);

const restTotal = async () => {
  const r = await api.rest('GET', '/posts?page=1');
  expect(r.status).toBe(200);
  return r.body.total as number;
};
const gqlTotal = async (args = '') => {
  const r = await api.gql(`{ posts(page: 1${args}) { total data { id } } }`);
  expect(r.errors).toBeUndefined();
  return r.data.posts.total as number;
};

describe('list totals', () => {
  it('a page read when nothing changed takes the total counted before: one statement, no count', async () => {
    await restTotal();
    for (const read of [restTotal, () => gqlTotal()]) {
      let total = 0;
      const lines = await statements(async () => (total = await read()));
      expect(total).toBe(12);
      expect(counting(lines)).toEqual([]);
    }
    // Another page of the same list: the same total, still not counted.
    const lines = await statements(async () => expect((await api.rest('GET', '/posts?page=2')).body).toMatchObject({ total: 12, lastPage: 2 }));
    expect(counting(lines)).toEqual([]);
  });

  it('a change committed by another connection (another instance) is in the next total: that page counts again', async () => {
    await restTotal();
    const other = new Client({ connectionString: app.databaseUrl });
    await other.connect();
    try {
      await other.query(`insert into posts (created_at, updated_at, user_id, title, slug, body) values (now(), now(), $1, 'Elsewhere', $2, 'b')`, [alice.user.id, `elsewhere-${Date.now()}`]);
      let total = 0;
      const lines = await statements(async () => (total = await restTotal()));
      expect(total).toBe(13);
      expect(counting(lines)).toHaveLength(1);
      expect(await gqlTotal()).toBe(13);
      // Trashed from outside: a soft delete is a change too.
      await other.query(`update posts set deleted_at = now() where title = 'Elsewhere'`);
      expect([await restTotal(), await gqlTotal()]).toEqual([12, 12]);
    } finally {
      await other.end();
    }
  });

  it('a change through either surface is in the next total of both, which counts in its one statement (the flush forgot the totals)', async () => {
    const before = await restTotal();
    await gqlTotal();
    const created = await api.rest('POST', '/posts', { token: alice.token, body: { title: 'Through REST', body: 'b' } });
    expect(created.status).toBe(201);
    // Without ListTotalsFlushes a page would first read without counting, find the version moved,
    // and read again counting: two statements.
    let total = 0;
    let lines = await statements(async () => (total = await restTotal()));
    expect({ total, statements: lines.length, counting: counting(lines).length }).toEqual({ total: before + 1, statements: 1, counting: 1 });
    expect(await gqlTotal()).toBe(before + 1);
    const deleted = await api.gql(`mutation($id: Int!) { deletePost(id: $id) { message } }`, { id: created.body.id }, { token: alice.token });
    expect(deleted.errors).toBeUndefined();
    lines = await statements(async () => (total = await gqlTotal()));
    expect({ total, statements: lines.length, counting: counting(lines).length }).toEqual({ total: before, statements: 1, counting: 1 });
    expect(await restTotal()).toBe(before);
  });

  it('lists that differ (a filter, its value) never share a total', async () => {
    const expected = async (where: string, params: unknown[]) =>
      Number((await sql<{ n: string }>(app, `select count(*) as n from posts where deleted_at is null and ${where}`, params))[0].n);
    const cases: [string, number][] = [
      ['', await livePosts()],
      [`, author: ${alice.user.id}`, await expected('user_id = ?', [alice.user.id])],
      [`, author: ${bob.user.id}`, await expected('user_id = ?', [bob.user.id])],
      [', published: true', await expected('published', [])],
      [`, published: true, author: ${bob.user.id}`, await expected('published and user_id = ?', [bob.user.id])],
    ];
    expect(new Set(cases.map(([, n]) => n)).size).toBe(cases.length);
    // Twice over: the second round answers from remembered totals, each its own.
    for (let round = 0; round < 2; round++) for (const [args, n] of cases) expect([args, await gqlTotal(args)]).toEqual([args, n]);
  });

  it('a TRUNCATE is a change too: the next total counts again', async () => {
    expect(await restTotal()).toBeGreaterThan(0);
    const other = new Client({ connectionString: app.databaseUrl });
    await other.connect();
    try {
      await other.query('truncate posts cascade');
      expect([await restTotal(), await gqlTotal()]).toEqual([0, 0]);
    } finally {
      await other.end();
    }
  });

  it("a page read inside a transaction that rolls back leaves no total: the next read outside answers the committed rows", async () => {
    const committed = await restTotal();
    await app.orm.em.fork().transactional(async (tx) => {
      await tx.execute(`insert into posts (created_at, updated_at, user_id, title, slug, body) values (now(), now(), ?, 'Phantom', ?, 'b')`, [alice.user.id, `phantom-${Date.now()}`]);
      // The transaction counts its own row, as it should; the version it reads is everyone's.
      const page = await postJsonSource(readContextOf(tx)).slice({}, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit: 10, offset: 0, withTotal: true });
      expect(page.total).toBe(committed + 1);
      throw Object.assign(new Error('roll back'), { rollback: true });
    }).catch((err: { rollback?: boolean }) => {
      if (!err.rollback) throw err;
    });
    expect([await restTotal(), await gqlTotal()]).toEqual([committed, committed]);
  });

  it('creates racing page reads: every total is one the list had, and the next read has them all', async () => {
    const before = await livePosts();
    const reads: Promise<number>[] = [];
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < 8; i++) {
      writes.push(api.rest('POST', '/posts', { token: bob.token, body: { title: `Race ${i}`, body: 'b' } }).then((r) => expect(r.status).toBe(201)));
      reads.push(restTotal(), gqlTotal());
    }
    await Promise.all(writes);
    for (const total of await Promise.all(reads)) {
      expect(total).toBeGreaterThanOrEqual(before);
      expect(total).toBeLessThanOrEqual(before + 8);
    }
    expect([await restTotal(), await gqlTotal(), await livePosts()]).toEqual([before + 8, before + 8, before + 8]);
    // Once the race is over, one more create: its flush forgets the total the reads left, so the
    // next page counts at once, in its one statement (a remembered total would first cost a page
    // read that finds its version moved, then the count).
    expect((await api.rest('POST', '/posts', { token: bob.token, body: { title: 'After the race', body: 'b' } })).status).toBe(201);
    let total = 0;
    const lines = await statements(async () => (total = await restTotal()));
    expect({ total, statements: lines.length, counting: counting(lines).length }).toEqual({ total: before + 9, statements: 1, counting: 1 });
  });
});
