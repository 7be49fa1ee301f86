import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { buildPost, sql, untilOneRow } from './support/blog';
import { asTenant, freshTenant } from './support/tenants';
import { keyLock } from '../src/modules/idempotency/idempotency.service';

/**
 * Idempotency-Key on the three creates (POST /posts, POST /posts/:id/comments, POST /tenant/posts)
 * and `idempotencyKey` on their mutations: every rule and message, over real HTTP and PostgreSQL.
 */
jest.setTimeout(60_000);

const IN_PROGRESS = 'A request with this Idempotency-Key is in progress';
const REUSED = 'Idempotency-Key reused for a different request';

let app: TestApp;
let api: ReturnType<typeof clients>;
let alice: { user: { id: number }; token: string };
let bob: { user: { id: number }; token: string };

beforeAll(async () => {
  app = await startTestApp();
  api = clients(app.url);
  alice = await buildUser(app);
  bob = await buildUser(app);
});
afterAll(async () => app?.close());

const newKey = () => `key-${randomBytes(6).toString('hex')}`;
const unique = () => `Idem ${randomBytes(5).toString('hex')}`;
const keyed = (key: string, extra: Record<string, string> = {}) => ({ 'Idempotency-Key': key, ...extra });
const postsTitled = async (title: string) => Number((await sql(app, 'select count(*) as n from posts where title = ?', [title]))[0].n);
const keyRows = async (key: string) => sql(app, 'select scope, status, body, resource_id from idempotency_keys where key = ?', [key]);

/**
 * Holds the service's lock on (scope, key) from a connection of the test's own, as a first
 * request still running would: a repeat must then be refused (409) without waiting.
 */
async function holdingKey<T>(scope: string, key: string, fn: () => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: app.databaseUrl });
  await c.connect();
  try {
    await c.query('select pg_advisory_lock($1::bigint)', [keyLock(scope, key)]);
    return await fn();
  } finally {
    await c.end();
  }
}

describe('REST: POST /posts with Idempotency-Key', () => {
  it('runs once; a repeat gets the stored answer byte for byte with Idempotent-Replayed: true and writes nothing', async () => {
    const key = newKey();
    const title = unique();
    const first = await api.rest('POST', '/posts', { token: alice.token, body: { title, body: 'b' }, headers: keyed(key) });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    // Meanwhile the post changes: the replay is the answer as first sent, not the post now.
    await sql(app, "update posts set body = 'changed' where id = ?", [first.body.id]);
    const again = await api.rest('POST', '/posts', { token: alice.token, body: { body: 'b', title }, headers: keyed(key) });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    expect(await postsTitled(title)).toBe(1);
    expect(await keyRows(key)).toEqual([{ scope: `u:${alice.user.id}`, status: 201, body: first.text, resource_id: first.body.id }]);
  });

  it('without a key every request creates', async () => {
    const title = unique();
    for (let i = 0; i < 2; i++) expect((await api.rest('POST', '/posts', { token: alice.token, body: { title, body: 'b' } })).status).toBe(201);
    expect(await postsTitled(title)).toBe(2);
  });

  it.each([
    ['empty', ''],
    ['a space', 'has space'],
    ['non-ASCII', 'clé'],
    ['a control character', 'a\tb'],
    ['256 characters', 'k'.repeat(256)],
  ])('a key with %s → 422 on Idempotency-Key, nothing written', async (_label, key) => {
    const title = unique();
    const res = await api.rest('POST', '/posts', { token: alice.token, body: { title, body: 'b' }, headers: keyed(key) });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ message: 'Validation failed', errors: [{ field: 'Idempotency-Key', message: 'Idempotency-Key must be 1 to 255 visible ASCII characters' }] });
    expect(await postsTitled(title)).toBe(0);
  });

  it('255 visible ASCII characters are a key', async () => {
    const key = Array.from({ length: 255 }, (_, i) => String.fromCharCode(0x21 + (i % 94))).join('');
    const res = await api.rest('POST', '/posts', { token: bob.token, body: { title: unique(), body: 'b' }, headers: keyed(key) });
    expect(res.status).toBe(201);
    expect((await api.rest('POST', '/posts', { token: bob.token, body: { title: res.body.title, body: 'b' }, headers: keyed(key) })).headers.get('idempotent-replayed')).toBe('true');
  });

  it('authentication comes first: no token with a bad key → 401', async () => {
    const res = await api.rest('POST', '/posts', { body: { title: 't', body: 'b' }, headers: keyed('bad key') });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: 'Unauthenticated' });
  });

  it('the same key with another body or path → 422 Idempotency-Key reused for a different request', async () => {
    const key = newKey();
    const title = unique();
    expect((await api.rest('POST', '/posts', { token: alice.token, body: { title, body: 'b' }, headers: keyed(key) })).status).toBe(201);
    const other = await api.rest('POST', '/posts', { token: alice.token, body: { title, body: 'other' }, headers: keyed(key) });
    expect(other.status).toBe(422);
    expect(other.body).toEqual({ message: REUSED, errors: [{ field: 'Idempotency-Key', message: REUSED }] });
    const post = await buildPost(app, alice.user);
    const elsewhere = await api.rest('POST', `/posts/${post.id}/comments`, { token: alice.token, body: { title, body: 'b' }, headers: keyed(key) });
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.body.message).toBe(REUSED);
    expect(await postsTitled(title)).toBe(1);
  });

  it('a repeat while the first still runs → 409, and nothing is written', async () => {
    const key = newKey();
    const title = unique();
    const res = await holdingKey(`u:${alice.user.id}`, key, () => api.rest('POST', '/posts', { token: alice.token, body: { title, body: 'b' }, headers: keyed(key) }));
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ message: IN_PROGRESS });
    expect(await postsTitled(title)).toBe(0);
    // Once the first is over, the key is free: nothing was stored, so the request runs.
    expect((await api.rest('POST', '/posts', { token: alice.token, body: { title, body: 'b' }, headers: keyed(key) })).status).toBe(201);
  });

  it('an answer stored under the key after the lookup (a first request committing): 409, the create undone', async () => {
    const key = newKey();
    const title = unique();
    // This session holds idempotency_keys: the request's lookup (a read) passes, its answer's store
    // waits. Meanwhile the session stores an answer under the key, as a first request committing
    // at that moment would, and commits.
    const other = new Client({ connectionString: app.databaseUrl });
    await other.connect();
    try {
      await other.query('begin');
      await other.query('lock table idempotency_keys in exclusive mode');
      const pending = api.rest('POST', '/posts', { token: alice.token, body: { title, body: 'b' }, headers: keyed(key) });
      const waiting = (await untilOneRow(() => other.query("select 1 from pg_locks where not granted and relation = 'idempotency_keys'::regclass"))) !== undefined;
      expect(waiting).toBe(true);
      await other.query(
        "insert into idempotency_keys (scope, key, fingerprint, status, body, resource_id, created_at, expires_at) values ($1, $2, 'first', 201, '{}', 1, now(), now() + interval '1 hour')",
        [`u:${alice.user.id}`, key],
      );
      await other.query('commit');
      const res = await pending;
      expect({ status: res.status, body: res.body }).toEqual({ status: 409, body: { message: IN_PROGRESS } });
      expect(await postsTitled(title)).toBe(0);
      expect(await keyRows(key)).toEqual([{ scope: `u:${alice.user.id}`, status: 201, body: '{}', resource_id: 1 }]);
    } finally {
      await other.end();
    }
  });

  it('a failed request is not stored: after a 422 the corrected request runs with the same key', async () => {
    const key = newKey();
    expect((await api.rest('POST', '/posts', { token: alice.token, body: { title: '' }, headers: keyed(key) })).status).toBe(422);
    const title = unique();
    expect((await api.rest('POST', '/posts', { token: alice.token, body: { title, body: 'b' }, headers: keyed(key) })).status).toBe(201);
    expect(await postsTitled(title)).toBe(1);
  });

  it("keys are the caller's: another user's same key is independent", async () => {
    const key = newKey();
    const title = unique();
    const a = await api.rest('POST', '/posts', { token: alice.token, body: { title, body: 'b' }, headers: keyed(key) });
    const b = await api.rest('POST', '/posts', { token: bob.token, body: { title, body: 'b' }, headers: keyed(key) });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(b.body.id).not.toBe(a.body.id);
    expect(b.body.user_id).toBe(bob.user.id);
    expect(await postsTitled(title)).toBe(2);
  });
  it('a slug taken by another title while the keyed create inserts: the key\'s whole transaction runs again, one post, one stored answer', async () => {
    const key = newKey();
    const base = `clash-${randomBytes(4).toString('hex')}`;
    expect((await api.rest('POST', '/posts', { token: alice.token, body: { title: base, body: 'b' } })).body.slug).toBe(base);
    // Another session inserts `<base>-2` (as the title "<base> 2" would) and keeps it uncommitted.
    const other = new Client({ connectionString: app.databaseUrl });
    await other.connect();
    try {
      await other.query('begin');
      await other.query(`insert into posts (created_at, updated_at, user_id, title, slug, body) values (now(), now(), $1, $2, $3, 'b')`, [bob.user.id, `${base} 2`, `${base}-2`]);
      const pending = api.rest('POST', '/posts', { token: alice.token, body: { title: base, body: 'keyed' }, headers: keyed(key) });
      // Until the keyed insert waits on that row, which its look at the slugs could not see.
      const waited = (await untilOneRow(() => other.query(`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and wait_event = 'transactionid'`))) !== undefined;
      expect(waited).toBe(true);
      await other.query('commit');
      const r = await pending;
      expect({ status: r.status, slug: r.body.slug, replayed: r.headers.get('idempotent-replayed') }).toEqual({ status: 201, slug: `${base}-3`, replayed: null });
      expect(Number((await sql(app, "select count(*) as n from posts where title = ? and body = 'keyed'", [base]))[0].n)).toBe(1);
      expect(await keyRows(key)).toEqual([{ scope: `u:${alice.user.id}`, status: 201, body: r.text, resource_id: r.body.id }]);
      const again = await api.rest('POST', '/posts', { token: alice.token, body: { title: base, body: 'keyed' }, headers: keyed(key) });
      expect({ status: again.status, text: again.text, replayed: again.headers.get('idempotent-replayed') }).toEqual({ status: 201, text: r.text, replayed: 'true' });
    } finally {
      await other.end();
    }
  });

  it('a key costs a create one statement: the lock with the lookup; the answer is stored by the statement that reads it', async () => {
    const post = await buildPost(app, bob.user);
    const count = async (path: string, body: object, key?: string) => {
      app.sql.length = 0;
      const r = await api.rest('POST', path, { token: alice.token, body, headers: key ? keyed(key) : {} });
      expect(r.status).toBe(201);
      return app.sql.length;
    };
    const plainComment = await count(`/posts/${post.id}/comments`, { body: 'c' });
    const plainPost = await count('/posts', { title: unique(), body: 'b' });
    expect(await count(`/posts/${post.id}/comments`, { body: 'c' }, newKey())).toBe(plainComment + 1);
    expect(await count('/posts', { title: unique(), body: 'b' }, newKey())).toBe(plainPost + 1);
    expect(app.sql.filter((l) => /savepoint/i.test(l))).toEqual([]);
  });
});

describe('REST: POST /posts/:id/comments and POST /tenant/posts', () => {
  it('a comment runs once and replays', async () => {
    const post = await buildPost(app, bob.user);
    const key = newKey();
    const first = await api.rest('POST', `/posts/${post.id}/comments`, { token: alice.token, body: { body: 'once' }, headers: keyed(key) });
    const again = await api.rest('POST', `/posts/${post.id}/comments`, { token: alice.token, body: { body: 'once' }, headers: keyed(key) });
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    expect(Number((await sql(app, 'select count(*) as n from comments where post_id = ?', [post.id]))[0].n)).toBe(1);
  });

  it('a comment on a missing post is 404 and stores nothing', async () => {
    const key = newKey();
    const res = await api.rest('POST', '/posts/999999/comments', { token: alice.token, body: { body: 'x' }, headers: keyed(key) });
    expect(res.status).toBe(404);
    expect(await keyRows(key)).toEqual([]);
  });

  it('tenant posts: scoped to the tenant and the signed-in user, replayed within it; without a bearer token a key is refused', async () => {
    const [t1, t2] = [freshTenant(), freshTenant()];
    const key = newKey();
    const body = { title: unique(), body: 'b' };
    const first = await api.rest('POST', '/tenant/posts', { body, token: alice.token, headers: keyed(key, asTenant(t1)) });
    const again = await api.rest('POST', '/tenant/posts', { body, token: alice.token, headers: keyed(key, asTenant(t1)) });
    const otherTenant = await api.rest('POST', '/tenant/posts', { body, token: alice.token, headers: keyed(key, asTenant(t2)) });
    const otherUser = await api.rest('POST', '/tenant/posts', { body, token: bob.token, headers: keyed(key, asTenant(t1)) });
    expect([first.status, again.status, otherTenant.status, otherUser.status]).toEqual([201, 201, 201, 201]);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    expect(otherTenant.headers.get('idempotent-replayed')).toBeNull();
    expect(otherTenant.body.tenant_id).toBe(t2);
    expect(otherUser.headers.get('idempotent-replayed')).toBeNull();
    // Anonymous callers of one tenant cannot be told apart: they would replay each other's creates.
    const anonymous = await api.rest('POST', '/tenant/posts', { body, headers: keyed(key, asTenant(t1)) });
    expect([anonymous.status, anonymous.body]).toEqual([
      422,
      { message: 'Validation failed', errors: [{ field: 'Idempotency-Key', message: 'Idempotency-Key is accepted only from a signed-in caller (a bearer token)' }] },
    ]);
    expect((await keyRows(key)).map((r) => r.scope).sort()).toEqual([`t:${t1}:u:${alice.user.id}`, `t:${t1}:u:${bob.user.id}`, `t:${t2}:u:${alice.user.id}`].sort());
    expect(Number((await sql(app, 'select count(*) as n from tenant_posts where title = ?', [body.title]))[0].n)).toBe(3);
    // Without a key, an anonymous tenant create is as ever.
    expect((await api.rest('POST', '/tenant/posts', { body, headers: asTenant(t1) })).status).toBe(201);
  });

  it('tenant posts: 401 Unknown tenant first, then 422 and 409 as elsewhere', async () => {
    expect((await api.rest('POST', '/tenant/posts', { body: { title: 't', body: 'b' }, token: alice.token, headers: keyed('bad key') })).body).toEqual({ message: 'Unknown tenant' });
    const t = freshTenant();
    const bad = await api.rest('POST', '/tenant/posts', { body: { title: 't', body: 'b' }, token: alice.token, headers: keyed('bad key', asTenant(t)) });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([{ field: 'Idempotency-Key', message: 'Idempotency-Key must be 1 to 255 visible ASCII characters' }]);
    const key = newKey();
    expect((await api.rest('POST', '/tenant/posts', { body: { title: 'a', body: 'b' }, token: alice.token, headers: keyed(key, asTenant(t)) })).status).toBe(201);
    const reused = await api.rest('POST', '/tenant/posts', { body: { title: 'other', body: 'b' }, token: alice.token, headers: keyed(key, asTenant(t)) });
    expect([reused.status, reused.body.message]).toEqual([422, REUSED]);
    const key2 = newKey();
    const running = await holdingKey(`t:${t}:u:${alice.user.id}`, key2, () => api.rest('POST', '/tenant/posts', { body: { title: 'a', body: 'b' }, token: alice.token, headers: keyed(key2, asTenant(t)) }));
    expect([running.status, running.body]).toEqual([409, { message: IN_PROGRESS }]);
  });

  it('two keys whose 32-bit hashes collide are two locks: one held, the other runs', async () => {
    // A pair of alice's keys on which PostgreSQL's hashtext (the old lock's key) agrees.
    const scope = `u:${alice.user.id}`;
    const [pair] = await sql<{ a: string; b: string }>(
      app,
      `select min(k) as a, max(k) as b from (select 'c' || g as k from generate_series(1, 400000) g) keys
        group by hashtext(? || k) having count(*) > 1 limit 1`,
      [`${scope}\n`],
    );
    const [{ same }] = await sql<{ same: boolean }>(app, 'select hashtext(?) = hashtext(?) as same', [`${scope}\n${pair.a}`, `${scope}\n${pair.b}`]);
    expect(same).toBe(true);
    const [held, other] = await holdingKey(scope, pair.a, () =>
      Promise.all([
        api.rest('POST', '/posts', { token: alice.token, body: { title: unique(), body: 'b' }, headers: keyed(pair.a) }),
        api.rest('POST', '/posts', { token: alice.token, body: { title: unique(), body: 'b' }, headers: keyed(pair.b) }),
      ]),
    );
    expect([held.status, held.body]).toEqual([409, { message: IN_PROGRESS }]);
    expect(other.status).toBe(201);
  });
});

describe('GraphQL: idempotencyKey on createPost, addComment, createTenantPost', () => {
  const CREATE = 'mutation ($t: String!, $b: String!, $k: String) { createPost(title: $t, body: $b, idempotencyKey: $k) { id title body user { id } } }';
  const COMMENT = 'mutation ($p: Int!, $b: String!, $k: String) { addComment(postId: $p, body: $b, idempotencyKey: $k) { id postId body } }';
  const TENANT = 'mutation ($t: String!, $b: String!, $k: String) { createTenantPost(title: $t, body: $b, idempotencyKey: $k) { id tenantId title } }';

  it('createPost runs once; a replay returns the post first created, read now through the selection', async () => {
    const key = newKey();
    const title = unique();
    const first = await api.gql(CREATE, { t: title, b: 'b', k: key }, { token: alice.token });
    expect(first.errors).toBeUndefined();
    await sql(app, "update posts set body = 'edited' where id = ?", [first.data.createPost.id]);
    const again = await api.gql(CREATE, { t: title, b: 'b', k: key }, { token: alice.token });
    expect(again.data.createPost).toEqual({ ...first.data.createPost, body: 'edited' });
    expect(await postsTitled(title)).toBe(1);
  });

  it('the errors: invalid key, reused key, in progress (with their codes)', async () => {
    const bad = await api.gql(CREATE, { t: unique(), b: 'b', k: 'no spaces allowed' }, { token: alice.token });
    expect(bad.errors![0]).toMatchObject({
      message: 'Validation failed',
      extensions: { code: 'BAD_USER_INPUT', errors: [{ field: 'idempotencyKey', message: 'idempotencyKey must be 1 to 255 visible ASCII characters' }] },
    });
    const key = newKey();
    expect((await api.gql(CREATE, { t: unique(), b: 'b', k: key }, { token: alice.token })).errors).toBeUndefined();
    const reused = await api.gql(CREATE, { t: unique(), b: 'b', k: key }, { token: alice.token });
    expect(reused.errors![0]).toMatchObject({ message: REUSED, extensions: { code: 'BAD_USER_INPUT', errors: [{ field: 'idempotencyKey', message: REUSED }] } });
    const key2 = newKey();
    const title = unique();
    const busy = await holdingKey(`u:${alice.user.id}`, key2, () => api.gql(CREATE, { t: title, b: 'b', k: key2 }, { token: alice.token }));
    expect(busy.errors![0]).toMatchObject({ message: IN_PROGRESS, extensions: { code: 'CONFLICT' } });
    expect(await postsTitled(title)).toBe(0);
    const anonymous = await api.gql(CREATE, { t: unique(), b: 'b', k: 'bad key' });
    expect(anonymous.errors![0]).toMatchObject({ message: 'Unauthenticated', extensions: { code: 'UNAUTHENTICATED' } });
  });

  it('the same key on REST and GraphQL is two different requests: 422', async () => {
    const key = newKey();
    const title = unique();
    expect((await api.rest('POST', '/posts', { token: bob.token, body: { title, body: 'b' }, headers: keyed(key) })).status).toBe(201);
    expect((await api.gql(CREATE, { t: title, b: 'b', k: key }, { token: bob.token })).errors![0].message).toBe(REUSED);
  });

  it("another user's same key is independent", async () => {
    const key = newKey();
    const title = unique();
    const a = await api.gql(CREATE, { t: title, b: 'b', k: key }, { token: alice.token });
    const b = await api.gql(CREATE, { t: title, b: 'b', k: key }, { token: bob.token });
    expect(b.data.createPost.id).not.toBe(a.data.createPost.id);
    expect(b.data.createPost.user.id).toBe(bob.user.id);
  });

  it('addComment and createTenantPost run once and replay', async () => {
    const post = await buildPost(app, bob.user);
    const key = newKey();
    const c1 = await api.gql(COMMENT, { p: post.id, b: 'hello', k: key }, { token: alice.token });
    const c2 = await api.gql(COMMENT, { p: post.id, b: 'hello', k: key }, { token: alice.token });
    expect(c1.errors).toBeUndefined();
    expect(c2.data).toEqual(c1.data);
    expect(Number((await sql(app, 'select count(*) as n from comments where post_id = ?', [post.id]))[0].n)).toBe(1);
    const t = freshTenant();
    const title = unique();
    const p1 = await api.gql(TENANT, { t: title, b: 'b', k: key }, { token: alice.token, headers: asTenant(t) });
    const p2 = await api.gql(TENANT, { t: title, b: 'b', k: key }, { token: alice.token, headers: asTenant(t) });
    expect(p1.errors).toBeUndefined();
    expect(p2.data).toEqual(p1.data);
    expect(p1.data.createTenantPost.tenantId).toBe(t);
    const other = await api.gql(TENANT, { t: title, b: 'b', k: key }, { token: alice.token, headers: asTenant(freshTenant()) });
    expect(other.data.createTenantPost.id).not.toBe(p1.data.createTenantPost.id);
    const running = await holdingKey(`t:${t}:u:${alice.user.id}`, 'held', () => api.gql(TENANT, { t: title, b: 'b', k: 'held' }, { token: alice.token, headers: asTenant(t) }));
    expect(running.errors![0]).toMatchObject({ message: IN_PROGRESS, extensions: { code: 'CONFLICT' } });
    const anonymous = await api.gql(TENANT, { t: title, b: 'b', k: newKey() }, { headers: asTenant(t) });
    expect(anonymous.errors![0]).toMatchObject({
      message: 'Validation failed',
      extensions: { code: 'BAD_USER_INPUT', errors: [{ field: 'idempotencyKey', message: 'idempotencyKey is accepted only from a signed-in caller (a bearer token)' }] },
    });
  });
});

describe('repeats fired at once', () => {
  it.each(['rest', 'graphql'] as const)('10 repeats of one key at once (%s): one row, every success identical, the rest 409', async (surface) => {
    const key = newKey();
    const title = unique();
    const send = async () => {
      if (surface === 'rest') {
        const r = await api.rest('POST', '/posts', { token: alice.token, body: { title, body: 'b' }, headers: keyed(key) });
        return { status: r.status, text: r.status === 201 ? r.text : JSON.stringify(r.body) };
      }
      const r = await api.gql('mutation ($t: String!, $k: String) { createPost(title: $t, body: "b", idempotencyKey: $k) { id title slug } }', { t: title, k: key }, { token: alice.token });
      return r.errors ? { status: 409, text: `${r.errors[0].extensions?.code} ${r.errors[0].message}` } : { status: 201, text: JSON.stringify(r.data) };
    };
    const answers = await Promise.all(Array.from({ length: 10 }, send));
    const ok = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status !== 201);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((a) => a.text)).size).toBe(1);
    const refusal = surface === 'rest' ? JSON.stringify({ message: IN_PROGRESS }) : `CONFLICT ${IN_PROGRESS}`;
    expect(refused.every((a) => a.status === 409 && a.text === refusal)).toBe(true);
    expect(await postsTitled(title)).toBe(1);
    expect(await keyRows(key)).toHaveLength(1);
  });
});

describe('expiry', () => {
  it('the periodic job removes expired keys; the same key then runs anew', async () => {
    const key = newKey();
    const title = unique();
    const first = await api.rest('POST', '/posts', { token: alice.token, body: { title, body: 'b' }, headers: keyed(key) });
    const hours = Number((await sql(app, 'select extract(epoch from expires_at - created_at) / 3600 as h from idempotency_keys where key = ?', [key]))[0].h);
    expect(hours).toBe(24);
    await sql(app, "update idempotency_keys set expires_at = now() - interval '1 second' where key = ?", [key]);
    await app.built.services.idempotencyExpiry.runNow();
    expect(await keyRows(key)).toEqual([]);
    const again = await api.rest('POST', '/posts', { token: alice.token, body: { title, body: 'b' }, headers: keyed(key) });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.body.id).not.toBe(first.body.id);
  });

  it('an expired key not yet removed is ignored by the lookup and replaced', async () => {
    const key = newKey();
    const title = unique();
    const first = await api.rest('POST', '/posts', { token: alice.token, body: { title, body: 'b' }, headers: keyed(key) });
    await sql(app, "update idempotency_keys set expires_at = now() - interval '1 second' where key = ?", [key]);
    const again = await api.rest('POST', '/posts', { token: alice.token, body: { title: unique(), body: 'other' }, headers: keyed(key) });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    const rows = await keyRows(key);
    expect(rows).toHaveLength(1);
    expect(rows[0].resource_id).toBe(again.body.id);
    expect(rows[0].resource_id).not.toBe(first.body.id);
  });
});

describe('IDEMPOTENCY_KEY_HOURS', () => {
  it('sets how long a key is kept', async () => {
    const other = await startTestApp({ IDEMPOTENCY_KEY_HOURS: '2' });
    try {
      const { token } = await buildUser(other);
      const key = newKey();
      expect((await clients(other.url).rest('POST', '/posts', { token, body: { title: 't', body: 'b' }, headers: keyed(key) })).status).toBe(201);
      const [row] = await sql(other, 'select extract(epoch from expires_at - created_at) / 3600 as h from idempotency_keys where key = ?', [key]);
      expect(Number(row.h)).toBe(2);
    } finally {
      await other.close();
    }
  });
});
