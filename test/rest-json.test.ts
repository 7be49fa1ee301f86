/**
 * One REST shape, two builders (CONTRACT 4): reads answer JSON text that PostgreSQL builds
 * (src/core/json-sql.ts), writes and restores answer what the TypeScript presenters give to
 * JSON.stringify. For the same rows both must be the same bytes. Every comparison here is of raw
 * response bytes over HTTP: the object of one answer is cut out of the other's envelope (never
 * parsed and re-serialised), so spacing, key order, escapes and timestamp digits all count.
 *
 * A restore of an active post or user changes nothing and answers through the presenter
 * (post.service.ts restore, user.service.ts restore), so it shows the presenter's text of any
 * row as it now is, embeds included.
 */
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser, uniqueEmail } from './support/factories';
import { sql } from './support/blog';
import { asTenant, freshTenant } from './support/tenants';
import { jsonObjectSql, type JsonKey } from '../src/core/json-sql';

let app: TestApp;
let api: ReturnType<typeof clients>;

/** An answer's raw bytes (the object comparisons), after the same request went through the client's checks. */
async function send(method: string, path: string, opts: { body?: unknown; token?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(app.url + path, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const bytes = Buffer.from(await res.arrayBuffer());
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${bytes.toString()}`);
  return bytes;
}

// --- Raw JSON slicing: where each value of a JSON text starts and ends, in bytes. -------------
// Structural characters are ASCII and UTF-8 never uses ASCII bytes inside a multi-byte
// character, so bytes can be scanned directly. Whitespace is skipped so that a spaced answer
// still slices (and then fails the comparison with a useful message).

const isWs = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const skipWs = (b: Buffer, i: number) => {
  while (isWs(b[i])) i++;
  return i;
};

/** The index just past the JSON value that starts at `i`. */
function valueEnd(b: Buffer, i: number): number {
  const c = b[i];
  if (c === 0x22) {
    i++;
    while (b[i] !== 0x22) i += b[i] === 0x5c ? 2 : 1;
    return i + 1;
  }
  if (c === 0x7b || c === 0x5b) {
    const close = c + 2; // } or ]
    i = skipWs(b, i + 1);
    if (b[i] === close) return i + 1;
    for (;;) {
      if (c === 0x7b) i = skipWs(b, skipWs(b, valueEnd(b, i)) + 1); // key, colon
      i = skipWs(b, valueEnd(b, i));
      if (b[i] === close) return i + 1;
      if (b[i] !== 0x2c) throw new Error(`bad JSON at byte ${i}: ${b.subarray(i, i + 40).toString()}`);
      i = skipWs(b, i + 1);
    }
  }
  while (i < b.length && b[i] !== 0x2c && b[i] !== 0x7d && b[i] !== 0x5d && !isWs(b[i])) i++;
  return i;
}

/** The members of the object `b` (exactly one JSON object), each value's own bytes. */
function members(b: Buffer): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  let i = skipWs(b, 0);
  if (b[i] !== 0x7b) throw new Error(`not an object: ${b.subarray(0, 60).toString()}`);
  i = skipWs(b, i + 1);
  if (b[i] === 0x7d) return out;
  for (;;) {
    const keyEnd = valueEnd(b, i);
    const key = JSON.parse(b.subarray(i, keyEnd).toString()) as string;
    const start = skipWs(b, skipWs(b, keyEnd) + 1);
    const end = valueEnd(b, start);
    out.set(key, b.subarray(start, end));
    i = skipWs(b, end);
    if (b[i] === 0x7d) return out;
    i = skipWs(b, i + 1);
  }
}

function member(b: Buffer, key: string): Buffer {
  const v = members(b).get(key);
  if (!v) throw new Error(`no "${key}" in ${b.subarray(0, 200).toString()}`);
  return v;
}

/** The elements of the array `b`, each one's own bytes. */
function elements(b: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let i = skipWs(b, 0);
  if (b[i] !== 0x5b) throw new Error(`not an array: ${b.subarray(0, 60).toString()}`);
  i = skipWs(b, i + 1);
  if (b[i] === 0x5d) return out;
  for (;;) {
    const end = valueEnd(b, i);
    out.push(b.subarray(i, end));
    i = skipWs(b, end);
    if (b[i] === 0x5d) return out;
    i = skipWs(b, i + 1);
  }
}

const idOf = (b: Buffer) => (JSON.parse(b.toString()) as { id: number }).id;

/** Byte equality, failing with the first differing byte and its surroundings (not a 100 kB diff). */
function expectSameBytes(read: Buffer, written: Buffer, what: string) {
  if (read.equals(written)) return;
  let i = 0;
  while (i < read.length && i < written.length && read[i] === written[i]) i++;
  const around = (b: Buffer) => JSON.stringify(b.subarray(Math.max(0, i - 60), i + 60).toString());
  throw new Error(
    `${what}: the SQL-built JSON and the presenter's differ at byte ${i} (lengths ${read.length} and ${written.length})\n` +
      `  SQL-built (read):       ${around(read)}\n  presenter (write answer): ${around(written)}`,
  );
}

/** Every item of a paginated list (page format), by id, as raw bytes. */
async function listItems(path: string, token?: string): Promise<Map<number, Buffer>> {
  const out = new Map<number, Buffer>();
  for (let page = 1; ; page++) {
    const body = await send('GET', `${path}${path.includes('?') ? '&' : '?'}page=${page}`, { token });
    for (const item of elements(member(body, 'data'))) out.set(idOf(item), item);
    if (member(body, 'nextPage').toString() === 'null') return out;
  }
}

/** What the reads of post `id` answer: GET /posts/:id, and its item in GET /posts. */
async function expectPostReads(id: number, written: Buffer, what: string) {
  expectSameBytes(await send('GET', `/posts/${id}`), written, `${what}: GET /posts/${id}`);
  const item = (await listItems('/posts')).get(id);
  expect(item).toBeDefined();
  expectSameBytes(item!, written, `${what}: GET /posts item`);
}

/** Every string JSON.stringify escapes and the neighbours it does not (U+0000 is refused as input: PostgreSQL text cannot hold it). */
const CONTROLS = Array.from({ length: 0x1f }, (_, i) => String.fromCharCode(i + 1)).join('');
const AWKWARD =
  `q"uote\\back\\\\slash/solidus</script>${CONTROLS}\u007f\u0080\u009f\u00a0\u00ad\u2028\u2029\ufeff\ufffd` +
  `Zoë café e\u0301 Ærøskøbing Straße ÇA 李雷 日本語テキスト 한국어 🙂🚀 👩‍👩‍👧 🏳️‍🌈 𝄞 𠜎 ` +
  `שלום עולם \u200f مرحبا بالعالم \u202eRTL\u202c end`;

/** The first `n` code points of `s` (never half a surrogate pair). */
const cut = (s: string, n: number) => [...s].slice(0, n).join('');

/** A body of exactly `n` UTF-16 units, mixing 1- to 4-byte UTF-8 characters and escapes; no whitespace at its ends (input is trimmed). */
function longBody(n: number): string {
  const unit = `Ab é李🙂"\\\n\t\u0001\u2028/`;
  let s = '[';
  while (s.length + unit.length < n - 1) s += unit;
  s += 'x'.repeat(n - 1 - s.length) + ']';
  expect(s.length).toBe(n);
  return s;
}

let admin: string;
let ada: { id: number; token: string; registered: Buffer };
let bob: { id: number; token: string; registered: Buffer };

async function register(name: string) {
  const bytes = await send('POST', '/auth/register', { body: { name, email: uniqueEmail('json'), password: 'password123' } });
  const user = member(bytes, 'user');
  return { id: idOf(user), token: JSON.parse(member(bytes, 'token').toString()) as string, registered: user };
}

beforeAll(async () => {
  app = await startTestApp();
  api = clients(app.url);
  admin = (await buildUser(app, { role: 'admin', name: 'Admin' })).token;
  ada = await register(`Ada "the first" \\ Lovelace — Zoë 李 🚀 שלום ${CONTROLS}`);
  bob = await register('Bob Ürün 🙂');
});
afterAll(() => app.close());

/** A post created through the API by `token`: the create answer's bytes. */
async function createPost(token: string, title: string, body: string) {
  const created = await send('POST', '/posts', { token, body: { title, body } });
  const id = idOf(created);
  // Both are the presenter's: the restore of the unchanged row answers what the create did.
  expectSameBytes(await send('PATCH', `/posts/${id}/restore`, { token: admin }), created, 'restore of an unchanged post vs its create answer');
  return { id, written: created };
}

describe('posts: GET /posts/:id and GET /posts items are the bytes the presenter writes', () => {
  it('a new post (null published_at, no comments, author embedded): the create answer', async () => {
    const bytes = await send('POST', '/posts', { token: ada.token, body: { title: 'Héllo 世界 🌍 مرحبا', body: 'plain' } });
    expect(member(bytes, 'published_at').toString()).toBe('null');
    expect(member(bytes, 'comments').toString()).toBe('[]');
    expect(member(bytes, 'comments_count').toString()).toBe('0');
    expect(member(bytes, 'user').toString()).toBe(JSON.stringify({ id: ada.id, name: JSON.parse(ada.registered.toString()).name }));
    await expectPostReads(idOf(bytes), bytes, 'new post');
  });

  it('unicode (accents, CJK, emoji, RTL), every control character, quotes, backslashes, U+007F, U+2028/9: as JSON.stringify escapes them', async () => {
    const body = `${AWKWARD}\n${AWKWARD}`;
    const title = cut(`Title ${AWKWARD}`, 200);
    const bytes = await send('POST', '/posts', { token: ada.token, body: { title, body } });
    // The presenter's text is JSON.stringify's: a sanity check of this test's reference.
    expect(member(bytes, 'body').toString()).toBe(JSON.stringify(body));
    expect(member(bytes, 'title').toString()).toBe(JSON.stringify(title.trim()));
    await expectPostReads(idOf(bytes), bytes, 'awkward text');
  });

  it('a 100,000-character body: created, then published (published_at set)', async () => {
    const body = longBody(100_000);
    const created = await send('POST', '/posts', { token: ada.token, body: { title: 'Long', body } });
    expect(member(created, 'body').toString()).toBe(JSON.stringify(body));
    const id = idOf(created);
    expectSameBytes(await send('GET', `/posts/${id}`), created, 'long body, created');
    const published = await send('PATCH', `/posts/${id}/publish`, { token: ada.token });
    expect(member(published, 'published_at').toString()).toMatch(/^"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"$/);
    await expectPostReads(id, published, 'long body, published');
    const onlyPublished = (await listItems('/posts?published=true')).get(id);
    expectSameBytes(onlyPublished!, published, 'GET /posts?published=true item');
  });

  it('30 comments in order (each comment answer is its item in the post), some sharing a timestamp (then by id)', async () => {
    const { id } = await createPost(ada.token, 'Many comments', 'Discuss.');
    const written: Buffer[] = [];
    const authors = [ada.token, bob.token, admin];
    for (let i = 0; i < 30; i++) {
      written.push(await send('POST', `/posts/${id}/comments`, { token: authors[i % 3], body: { body: `#${i} ${i % 2 ? AWKWARD : 'ok'}` } }));
    }
    const read = await send('GET', `/posts/${id}`);
    const items = elements(member(read, 'comments'));
    expect(items).toHaveLength(30);
    items.forEach((item, i) => expectSameBytes(item, written[i], `comment #${i}`));
    expect(member(read, 'comments_count').toString()).toBe('30');
    await expectPostReads(id, await send('PATCH', `/posts/${id}/restore`, { token: ada.token }), 'post with 30 comments');

    // Ten comments on one timestamp: both builders order them by id.
    const ids = written.map(idOf);
    await sql(app, `update comments set created_at = '2026-03-01T10:00:00.500Z' where id in (${ids.slice(10, 20).join(',')})`);
    const restored = await send('PATCH', `/posts/${id}/restore`, { token: admin });
    const order = elements(member(restored, 'comments')).map(idOf);
    expect(order).toEqual([...ids.slice(10, 20), ...ids.slice(0, 10), ...ids.slice(20)]);
    await expectPostReads(id, restored, 'comments sharing a timestamp');
  });

  it('timestamps with milliseconds and microseconds, years before 1970 and near the ends of the range', async () => {
    const { id } = await createPost(bob.token, 'Stamps', 'Tick.');
    const c = idOf(await send('POST', `/posts/${id}/comments`, { token: ada.token, body: { body: 'tock' } }));
    const cases: [string, string, string | null][] = [
      ['2024-02-29T23:59:59.999Z', '2024-03-01T00:00:00.001Z', '2000-01-01T00:00:00.000Z'],
      ['1969-12-31T23:59:59.999Z', '1970-01-01T00:00:00.000Z', null],
      // Microseconds: PostgreSQL keeps them; both builders must cut them the same way.
      ['2025-06-30T12:34:56.123999Z', '2025-06-30T12:34:56.999999Z', '2025-06-30T12:34:56.000001Z'],
      ['0001-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z', '1000-06-15T08:09:10.011Z'],
    ];
    for (const [created, published, other] of cases) {
      await sql(app, 'update posts set created_at = ?, published = ?, published_at = ? where id = ?', [created, other !== null, other, id]);
      await sql(app, 'update comments set created_at = ?, updated_at = ? where id = ?', [published, created, c]);
      const written = await send('PATCH', `/posts/${id}/restore`, { token: admin });
      expect(member(written, 'created_at').toString()).toBe(JSON.stringify(new Date(Math.floor(Date.parse(created)))));
      await expectPostReads(id, written, `timestamps ${created}`);
    }
  });

  it('a soft-deleted author is null in the post and in its comments; back after the user is restored', async () => {
    const carol = await register('Carol 👋');
    const own = await createPost(carol.token, 'By Carol', 'Soon without author.');
    const theirs = await createPost(ada.token, 'Commented by Carol', 'Hi.');
    const comment = await send('POST', `/posts/${theirs.id}/comments`, { token: carol.token, body: { body: 'Carol was here' } });
    expectSameBytes(elements(member(await send('GET', `/posts/${theirs.id}`), 'comments'))[0], comment, 'comment before delete');

    expect((await api.rest('DELETE', `/admin/users/${carol.id}`, { token: admin })).status).toBe(200);
    // A publish by an admin answers the post with its author as now seen: null.
    const published = await send('PATCH', `/posts/${own.id}/publish`, { token: admin });
    expect(member(published, 'user').toString()).toBe('null');
    await expectPostReads(own.id, published, 'post of a deleted author');
    const restored = await send('PATCH', `/posts/${theirs.id}/restore`, { token: admin });
    expect(member(elements(member(restored, 'comments'))[0], 'user').toString()).toBe('null');
    await expectPostReads(theirs.id, restored, 'comment of a deleted author');

    const back = await send('PATCH', `/admin/users/${carol.id}/restore`, { token: admin });
    expectSameBytes((await listItems('/admin/users', admin)).get(carol.id)!, back, 'restored user in GET /admin/users');
    await expectPostReads(own.id, await send('PATCH', `/posts/${own.id}/restore`, { token: admin }), 'author back');
  });
});

describe('GET /trash items', () => {
  it('are the bytes of the presenter for the same row (a restore answer, its deleted_at then set in the database)', async () => {
    const { id } = await createPost(bob.token, cut(`Trash me ${AWKWARD}`, 120), AWKWARD);
    for (let i = 0; i < 3; i++) await send('POST', `/posts/${id}/comments`, { token: i ? ada.token : bob.token, body: { body: `c${i} ${AWKWARD}` } });
    expect((await api.rest('DELETE', `/posts/${id}`, { token: bob.token })).status).toBe(200);
    const trashed = (await listItems('/trash', admin)).get(id)!;
    expect(member(trashed, 'deleted_at').toString()).not.toBe('null');

    // PATCH /trash/:id/restore is the presenter's answer of the restored row; trash the row again
    // in the database without touching anything else: the trash item must be that answer with
    // only deleted_at filled in.
    const restored = await send('PATCH', `/trash/${id}/restore`, { token: admin });
    await expectPostReads(id, restored, 'restored from the trash');
    const deletedAt = new Date('2026-05-04T03:02:01.234Z');
    await sql(app, 'update posts set deleted_at = ? where id = ?', [deletedAt.toISOString(), id]);
    const needle = Buffer.from('"deleted_at":null,');
    const at = restored.indexOf(needle);
    expect(at).toBeGreaterThan(0);
    expect(restored.indexOf(needle, at + 1)).toBe(-1);
    const expected = Buffer.concat([restored.subarray(0, at), Buffer.from(`"deleted_at":${JSON.stringify(deletedAt)},`), restored.subarray(at + needle.length)]);
    expectSameBytes((await listItems('/trash', admin)).get(id)!, expected, 'GET /trash item');

    const again = await send('PATCH', `/posts/${id}/restore`, { token: bob.token });
    await expectPostReads(id, again, 'restored by its author');
  });
});

describe('users: GET /admin/users items', () => {
  it('are the register answer and the (unchanging) restore answer, email_verified_at null or set', async () => {
    const list = await listItems('/admin/users', admin);
    for (const u of [ada, bob]) {
      expectSameBytes(list.get(u.id)!, u.registered, 'GET /admin/users item vs register answer');
      expectSameBytes(list.get(u.id)!, await send('PATCH', `/admin/users/${u.id}/restore`, { token: admin }), 'GET /admin/users item vs restore answer');
    }
    await sql(app, 'update users set email_verified_at = ? where id = ?', ['2026-01-02T03:04:05.678901Z', bob.id]);
    const restored = await send('PATCH', `/admin/users/${bob.id}/restore`, { token: admin });
    expect(member(restored, 'email_verified_at').toString()).toBe('"2026-01-02T03:04:05.678Z"');
    expectSameBytes((await listItems('/admin/users', admin)).get(bob.id)!, restored, 'verified user');
  });
});

describe('tenant posts: GET /tenant/posts and GET /tenant/admin/posts items', () => {
  it('are the create answer', async () => {
    const tenant = freshTenant();
    const written: Buffer[] = [];
    for (const [title, body] of [['Plain', 'text'], [cut(`Tenant ${AWKWARD}`, 200), AWKWARD], ['Long', longBody(50_000)]]) {
      written.push(await send('POST', '/tenant/posts', { headers: asTenant(tenant), body: { title, body } }));
    }
    const listed = elements(await send('GET', '/tenant/posts', { headers: asTenant(tenant) }));
    expect(listed).toHaveLength(written.length);
    listed.forEach((item, i) => expectSameBytes(item, written[i], `GET /tenant/posts item ${i}`));
    const all = new Map(elements(await send('GET', '/tenant/admin/posts', { token: admin })).map((b) => [idOf(b), b]));
    for (const w of written) expectSameBytes(all.get(idOf(w))!, w, 'GET /tenant/admin/posts item');
  });
});

describe('the generator (src/core/json-sql.ts) against JSON.stringify, value by value', () => {
  const KEYS: JsonKey[] = [['n', 'int'], ['s', 'string'], ['b', 'bool'], ['t', 'timestamp?'], ['z', 'string?'], ['j', 'json?']];

  it('every code point of the BMP except surrogates and U+0000, and a spread of the others', async () => {
    const rows = await sql<{ n: number; s: string; json: string }>(
      app,
      `select x.n, x.s, ${jsonObjectSql('x', KEYS)} as json from (
         select n, chr(n) || 'x' || chr(n) as s, n % 2 = 0 as b, null::timestamptz as t, null::text as z, null::text as j
         from generate_series(1, 1114111) n where (n < 55296 or n > 57343) and (n <= 65535 or n % 997 = 0 or n in (65536, 128512, 1114111))
       ) x order by x.n`,
    );
    expect(rows.length).toBeGreaterThan(63_000);
    const wrong: string[] = [];
    for (const r of rows) {
      const expected = JSON.stringify({ n: r.n, s: String.fromCodePoint(r.n) + 'x' + String.fromCodePoint(r.n), b: r.n % 2 === 0, t: null, z: null, j: null });
      if (r.json !== expected && wrong.length < 10) wrong.push(`U+${r.n.toString(16)}: ${JSON.stringify(r.json)} vs ${JSON.stringify(expected)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('timestamps from year 1 to 9999 to the millisecond (microseconds cut, as the ORM reads them), and nested JSON', async () => {
    const stamps = ['0001-01-01T00:00:00.000Z', '0999-12-31T23:59:59.999Z', '1969-12-31T23:59:59.999Z', '1970-01-01T00:00:00.000Z', '2000-02-29T12:00:00.010Z', '2038-01-19T03:14:08.100Z', '9999-12-31T23:59:59.999Z'];
    const rows = await sql<{ json: string }>(
      app,
      `select ${jsonObjectSql('x', KEYS)} as json from (
         select u.n::int as n, '' as s, true as b, u.t::timestamptz as t, 'z' as z, '{"a":[1,null]}' as j from unnest(string_to_array(?, ',')) with ordinality as u(t, n)
       ) x order by x.n`,
      [stamps.join(',')],
    );
    expect(rows.map((r) => r.json)).toEqual(stamps.map((t, i) => JSON.stringify({ n: i + 1, s: '', b: true, t: new Date(t), z: 'z', j: { a: [1, null] } })));
  });

  it('an object with no keys is {}', async () => {
    const [{ json }] = await sql<{ json: string }>(app, `select ${jsonObjectSql('x', [])} as json from (select 1) x`);
    expect(json).toBe('{}');
  });
});
