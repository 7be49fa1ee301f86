import { entityTag } from '../src/core/etag';
import { startTestApp, type TestApp } from './support/harness';
import { rest } from './support/client';
import { checkedRest } from './support/openapi';
import { buildUser } from './support/factories';
import { buildPost } from './support/blog';
import { Revalidation } from '../src/core/http';

/**
 * CONTRACT 16: HTTP caching. Public reads (GET /posts, GET /posts/:id, anonymous GraphQL queries
 * by GET) carry a strong ETag and a public Cache-Control and answer 304 to a matching
 * If-None-Match; everything else is no-store. A change made anywhere (REST or GraphQL, this
 * instance or another on the same database) changes the tag at once.
 */
jest.setTimeout(60_000);

let app: TestApp;
/** A second instance of the service on the same database. */
let other: TestApp;
let api: ReturnType<typeof checkedRest>;
let author: Awaited<ReturnType<typeof buildUser>>;
let admin: Awaited<ReturnType<typeof buildUser>>;

beforeAll(async () => {
  app = await startTestApp();
  other = await startTestApp({ DATABASE_URL: app.databaseUrl });
  // Every REST answer below, 304s included, is checked against /openapi.json.
  api = checkedRest(app.url);
  author = await buildUser(app, { name: 'Ada' });
  admin = await buildUser(app, { role: 'admin' });
});
afterAll(async () => {
  await other?.close();
  await app?.close();
});

const TAG = /^"[A-Za-z0-9_-]{20,}"$/;
const headersOf = (res: { headers: Headers }) => ({
  etag: res.headers.get('etag'),
  cacheControl: res.headers.get('cache-control'),
  vary: res.headers.get('vary'),
});

/** GET /graphql?query=... as a browser or CDN would send it. */
async function gqlGet(base: string, query: string, variables?: Record<string, unknown>, headers: Record<string, string> = {}) {
  const qs = new URLSearchParams({ query, ...(variables ? { variables: JSON.stringify(variables) } : {}) });
  const res = await fetch(`${base}/graphql?${qs}`, { headers: { accept: 'application/json', ...headers } });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
}

async function gqlPost(base: string, query: string, variables: Record<string, unknown>, token: string) {
  const res = await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ query, variables }) });
  const body = (await res.json()) as { data?: any; errors?: unknown[] };
  expect(body.errors).toBeUndefined();
  return body.data;
}

describe('public REST reads', () => {
  it('GET /posts and GET /posts/:id: strong ETag, public Cache-Control, Vary; a matching If-None-Match is 304 with no body', async () => {
    const post = await buildPost(app, author.user, { published: true });
    for (const path of ['/posts', `/posts/${post.id}`, '/posts?paginate=cursor', `/posts?author=${author.user.id}&published=true`]) {
      const full = await api('GET', path);
      expect(full.status).toBe(200);
      const h = headersOf(full);
      expect(h).toEqual({ etag: expect.stringMatching(TAG), cacheControl: 'public, no-cache', vary: 'Authorization, X-Tenant-Id' });
      const again = await api('GET', path);
      expect(again.headers.get('etag')).toBe(h.etag);
      expect(again.text).toBe(full.text);

      const notModified = await api('GET', path, { headers: { 'if-none-match': h.etag! } });
      expect({ path, status: notModified.status, text: notModified.text, ...headersOf(notModified) }).toEqual({ path, status: 304, text: '', ...h });
      // A list of tags, a weak form of the tag, and `*` match; another tag does not.
      for (const inm of [`"nope", ${h.etag}`, `W/${h.etag}`, '*']) expect((await api('GET', path, { headers: { 'if-none-match': inm } })).status).toBe(304);
      const changed = await api('GET', path, { headers: { 'if-none-match': '"something-else"' } });
      expect({ status: changed.status, text: changed.text }).toEqual({ status: 200, text: full.text });
    }
  });

  it('HEAD answers as GET without a body, the same ETag and Cache-Control, and 304 likewise', async () => {
    const post = await buildPost(app, author.user);
    for (const path of ['/posts', `/posts/${post.id}`]) {
      const get = await rest(app.url, 'GET', path);
      const head = await rest(app.url, 'HEAD', path);
      expect({ status: head.status, text: head.text, ...headersOf(head), length: head.headers.get('content-length') }).toEqual({
        status: 200,
        text: '',
        ...headersOf(get),
        length: String(Buffer.byteLength(get.text)),
      });
      const notModified = await rest(app.url, 'HEAD', path, { headers: { 'if-none-match': get.headers.get('etag')! } });
      expect(notModified.status).toBe(304);
    }
  });

  it('with Authorization or X-Tenant-Id the same reads are no-store and never 304; one post keeps the tag of its JSON, a list has none', async () => {
    const post = await buildPost(app, author.user, { published: true });
    const tag = (await api('GET', `/posts/${post.id}`)).headers.get('etag')!;
    for (const headers of [{ authorization: `Bearer ${author.token}` }, { 'x-tenant-id': '1' }, { authorization: 'Bearer not-a-token' }] as Record<string, string>[]) {
      for (const path of ['/posts', `/posts/${post.id}`]) {
        const res = await api('GET', path, { headers: { ...headers, 'if-none-match': tag } });
        expect({ path, headers, status: res.status === 304 ? 304 : 'not 304', cacheControl: res.headers.get('cache-control'), etag: res.headers.get('etag') }).toEqual({
          path,
          headers,
          status: 'not 304',
          cacheControl: 'no-store',
          // One post's answer always carries its JSON's tag (a write's If-Match), the same for every caller.
          etag: path === '/posts' ? null : tag,
        });
      }
    }
  });

  it('every other answer is Cache-Control: no-store: writes, errors, 404, 405, health, metrics, documentation', async () => {
    const post = await buildPost(app, author.user);
    const answers = [
      await api('GET', '/posts/999999'),
      await api('GET', '/posts?page=nope'),
      await api('GET', '/posts/abc'),
      await api('POST', '/posts', { token: author.token, body: { title: 'Fresh', body: 'Text' } }),
      await api('POST', '/posts', { body: { title: 'Fresh', body: 'Text' } }),
      await api('POST', `/posts/${post.id}/comments`, { token: author.token, body: { body: 'hi' } }),
      await api('PUT', '/posts'),
      await api('GET', '/no/such/path'),
      await api('GET', '/auth/me', { token: author.token }),
      await api('GET', '/trash', { token: admin.token }),
      await api('GET', '/tenant/posts', { headers: { 'x-tenant-id': '1' } }),
      await api('GET', '/healthz'),
      await api('GET', '/readyz'),
      await api('GET', '/openapi.json'),
      await rest(app.url, 'GET', '/metrics'),
      await rest(app.url, 'GET', '/docs', { headers: { accept: 'text/html' } }),
      await rest(app.url, 'GET', '/graphql', { headers: { accept: 'text/html' } }),
      await rest(app.url, 'OPTIONS', '/posts'),
    ];
    // Answers of one post, comment or user carry its JSON's tag (for If-Match), still no-store.
    const tagged = new Set([answers[3], answers[5], answers[8]]);
    for (const res of answers) {
      expect({ status: res.status, cacheControl: res.headers.get('cache-control'), etag: res.headers.get('etag') }).toEqual({
        status: res.status,
        cacheControl: 'no-store',
        etag: tagged.has(res) ? entityTag(res.text) : null,
      });
    }
  });

  it('PUBLIC_CACHE_SECONDS sets max-age', async () => {
    const cached = await startTestApp({ DATABASE_URL: app.databaseUrl, PUBLIC_CACHE_SECONDS: '60' });
    try {
      const res = await rest(cached.url, 'GET', '/posts');
      expect(res.headers.get('cache-control')).toBe('public, max-age=60');
      const gql = await gqlGet(cached.url, '{ posts { total } }');
      expect(gql.headers.get('cache-control')).toBe('public, max-age=60');
      // Two instances of one service on one database agree on the tag.
      expect(res.headers.get('etag')).toBe((await rest(app.url, 'GET', '/posts')).headers.get('etag'));
    } finally {
      await cached.close();
    }
  });
});

describe('public GraphQL reads', () => {
  it('an anonymous query by GET: ETag, public Cache-Control, Vary with Accept, and 304; the tag follows the media type', async () => {
    const query = '{ posts { total data { id title } } }';
    const full = await gqlGet(app.url, query);
    expect(full.status).toBe(200);
    const h = headersOf(full);
    expect(h).toEqual({ etag: expect.stringMatching(TAG), cacheControl: 'public, no-cache', vary: 'Accept, Authorization, X-Tenant-Id' });
    const notModified = await gqlGet(app.url, query, undefined, { 'if-none-match': h.etag! });
    expect({ status: notModified.status, text: notModified.text, ...headersOf(notModified) }).toEqual({ status: 304, text: '', ...h });
    const head = await fetch(`${app.url}/graphql?query=${encodeURIComponent(query)}`, { method: 'HEAD', headers: { accept: 'application/json' } });
    expect({ status: head.status, text: await head.text(), etag: head.headers.get('etag') }).toEqual({ status: 200, text: '', etag: h.etag });
    // The same data as application/graphql-response+json is another representation: another tag.
    const other = await gqlGet(app.url, query, undefined, { accept: 'application/graphql-response+json', 'if-none-match': h.etag! });
    expect(other.status).toBe(200);
    expect(other.text).toBe(full.text);
    expect(other.headers.get('etag')).toMatch(TAG);
    expect(other.headers.get('etag')).not.toBe(h.etag);
  });

  it('not cached: a query of anything but post lists and details (and the anonymous me, null), which the data version does not follow', async () => {
    // Introspection stands for a field over anything else: no table the version covers answers it.
    for (const query of ['{ __schema { queryType { name } } }', '{ posts { total } __schema { queryType { name } } }', '{ me { id } __type(name: "Post") { name } }']) {
      const res = await gqlGet(app.url, query);
      expect({ query, status: res.status, cacheControl: res.headers.get('cache-control'), etag: res.headers.get('etag') }).toEqual({ query, status: 200, cacheControl: 'no-store', etag: null });
    }
  });

  it('not cached: POST, answers with errors, mutations refused by GET, Authorization or X-Tenant-Id', async () => {
    const query = '{ posts { total } }';
    const tag = (await gqlGet(app.url, query)).headers.get('etag')!;
    const post = await fetch(`${app.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
    const answers = [
      { status: post.status, headers: post.headers },
      await gqlGet(app.url, '{ post(id: 999999) { id } }'),
      await gqlGet(app.url, '{ nope }'),
      await gqlGet(app.url, 'mutation { forgotPassword(email: "a@example.test") { message } }'),
      await gqlGet(app.url, query, undefined, { authorization: `Bearer ${author.token}`, 'if-none-match': tag }),
      await gqlGet(app.url, query, undefined, { 'x-tenant-id': '1', 'if-none-match': tag }),
    ];
    for (const res of answers) {
      expect({ status: res.status, cacheControl: res.headers.get('cache-control'), etag: res.headers.get('etag') }).toEqual({ status: res.status, cacheControl: 'no-store', etag: null });
      expect(res.status).not.toBe(304);
    }
  });
});

describe('never a stale page after a write', () => {
  const POST_QUERY = 'query($id: Int!) { post(id: $id) { id title published user { id name } commentsCount comments { body } } }';
  const LIST_QUERY = '{ posts { total data { id published commentsCount user { id } } } }';

  /** Revalidates every page with its tag: each must answer 200 with a new tag and another body. */
  async function expectAllChanged(pages: { label: string; fetch: (inm?: string) => Promise<{ status: number; headers: Headers; text: string }>; tag: string; text: string }[]) {
    for (const p of pages) {
      const res = await p.fetch(p.tag);
      expect({ page: p.label, status: res.status }).toEqual({ page: p.label, status: 200 });
      expect(res.headers.get('etag')).not.toBe(p.tag);
      expect(res.text).not.toBe(p.text);
    }
  }

  /** The current tags of the post's REST and GraphQL pages, on both instances. */
  async function snapshot(postId: number) {
    const pages = [
      { label: 'A REST detail', fetch: (inm?: string) => rest(app.url, 'GET', `/posts/${postId}`, { headers: inm ? { 'if-none-match': inm } : {} }) },
      { label: 'A REST list', fetch: (inm?: string) => rest(app.url, 'GET', '/posts', { headers: inm ? { 'if-none-match': inm } : {} }) },
      { label: 'B REST detail', fetch: (inm?: string) => rest(other.url, 'GET', `/posts/${postId}`, { headers: inm ? { 'if-none-match': inm } : {} }) },
      { label: 'A GraphQL detail', fetch: (inm?: string) => gqlGet(app.url, POST_QUERY, { id: postId }, inm ? { 'if-none-match': inm } : {}) },
      { label: 'B GraphQL list', fetch: (inm?: string) => gqlGet(other.url, LIST_QUERY, undefined, inm ? { 'if-none-match': inm } : {}) },
    ];
    return Promise.all(
      pages.map(async (p) => {
        const res = await p.fetch();
        expect({ page: p.label, status: res.status }).toEqual({ page: p.label, status: 200 });
        expect((await p.fetch(res.headers.get('etag')!)).status).toBe(304);
        return { ...p, tag: res.headers.get('etag')!, text: res.text };
      }),
    );
  }

  it('a comment added through GraphQL on the other instance, then one through REST: every page revalidates to 200 with a new tag', async () => {
    const post = await buildPost(app, author.user, { published: true });
    let pages = await snapshot(post.id);
    await gqlPost(other.url, 'mutation($postId: Int!) { addComment(postId: $postId, body: "via GraphQL on B") { id } }', { postId: post.id }, author.token);
    await expectAllChanged(pages);

    pages = await snapshot(post.id);
    expect((await rest(app.url, 'POST', `/posts/${post.id}/comments`, { token: author.token, body: { body: 'via REST on A' } })).status).toBe(201);
    await expectAllChanged(pages);
  });

  it('a publish through REST on the other instance, and through GraphQL', async () => {
    const post = await buildPost(app, author.user);
    let pages = await snapshot(post.id);
    expect((await rest(other.url, 'PATCH', `/posts/${post.id}/publish`, { token: author.token })).status).toBe(200);
    await expectAllChanged(pages);

    const second = await buildPost(app, author.user);
    pages = (await snapshot(second.id)).filter((p) => !p.label.includes('list'));
    await gqlPost(app.url, 'mutation($id: Int!) { publishPost(id: $id) { id } }', { id: second.id }, author.token);
    await expectAllChanged(pages);
  });

  it('a post trashed (GraphQL) and restored (REST): its page is a 404 no-store, then 200 with a new tag; the lists change each time', async () => {
    const post = await buildPost(app, author.user, { published: true });
    const pages = await snapshot(post.id);
    await gqlPost(other.url, 'mutation($id: Int!) { deletePost(id: $id) { message } }', { id: post.id }, author.token);
    for (const p of pages) {
      const res = await p.fetch(p.tag);
      expect(res.status).not.toBe(304);
      if (p.label.includes('REST detail')) expect({ status: res.status, cacheControl: res.headers.get('cache-control') }).toEqual({ status: 404, cacheControl: 'no-store' });
      else if (p.label.includes('GraphQL detail')) expect(res.headers.get('cache-control')).toBe('no-store'); // NOT_FOUND error
      else expect(res.status).toBe(200);
    }
    const before = await rest(app.url, 'GET', '/posts');
    expect((await rest(app.url, 'PATCH', `/posts/${post.id}/restore`, { token: author.token })).status).toBe(200);
    const after = await rest(app.url, 'GET', '/posts', { headers: { 'if-none-match': before.headers.get('etag')! } });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'));
    // Restored: 200 with the page as it is now (its updated_at moved), unless it is byte for byte the old one.
    const now = await rest(app.url, 'GET', `/posts/${post.id}`);
    const detail = await rest(app.url, 'GET', `/posts/${post.id}`, { headers: { 'if-none-match': pages[0].tag } });
    expect(detail.status).toBe(now.text === pages[0].text ? 304 : 200);
    expect(detail.headers.get('etag')).toBe(now.headers.get('etag'));
  });

  it("the post's author deleted by an admin (through the other instance): every page revalidates to 200 without the author", async () => {
    const writer = await buildUser(app, { name: 'Leaving' });
    const post = await buildPost(app, writer.user, { published: true });
    const pages = await snapshot(post.id);
    expect((await rest(other.url, 'DELETE', `/admin/users/${writer.user.id}`, { token: admin.token })).status).toBe(200);
    await expectAllChanged(pages);
    expect((await rest(app.url, 'GET', `/posts/${post.id}`)).body.user).toBeNull();
  });
});

describe('a change made outside the service', () => {
  it('a TRUNCATE of comments: the post page revalidates to 200 without them, REST and GraphQL', async () => {
    const post = await buildPost(app, author.user, { published: true });
    expect((await rest(app.url, 'POST', `/posts/${post.id}/comments`, { token: author.token, body: { body: 'soon gone' } })).status).toBe(201);
    const query = 'query($id: Int!) { post(id: $id) { id commentsCount } }';
    const restTag = (await rest(app.url, 'GET', `/posts/${post.id}`)).headers.get('etag')!;
    const gqlTag = (await gqlGet(app.url, query, { id: post.id })).headers.get('etag')!;
    // Remembered: the next revalidations answer 304 from the version alone.
    expect((await rest(app.url, 'GET', `/posts/${post.id}`, { headers: { 'if-none-match': restTag } })).status).toBe(304);
    expect((await gqlGet(app.url, query, { id: post.id }, { 'if-none-match': gqlTag })).status).toBe(304);
    await app.orm.em.fork().execute('truncate comments');
    const restAfter = await rest(app.url, 'GET', `/posts/${post.id}`, { headers: { 'if-none-match': restTag } });
    expect({ status: restAfter.status, comments: restAfter.body.comments }).toEqual({ status: 200, comments: [] });
    const gqlAfter = await gqlGet(app.url, query, { id: post.id }, { 'if-none-match': gqlTag });
    expect({ status: gqlAfter.status, data: JSON.parse(gqlAfter.text).data }).toEqual({ status: 200, data: { post: { id: post.id, commentsCount: 0 } } });
  });
});

describe('a revalidation of an unchanged page skips the page', () => {
  const VERSION = /from "page_versions"/;
  const countFor = async (send: () => Promise<{ status: number }>) => {
    app.sql.length = 0;
    const { status } = await send();
    return { status, statements: app.sql.length, versionOnly: app.sql.length === 1 && VERSION.test(app.sql[0]) };
  };

  it('REST and GraphQL: the first revalidation builds the page (version + page), the next ones run only the version statement; any committed change, from anywhere, builds it again', async () => {
    const post = await buildPost(app, author.user, { published: true });
    const query = 'query($id: Int!) { post(id: $id) { id title commentsCount } }';
    const pages = [
      { label: 'REST detail', send: (inm?: string) => rest(app.url, 'GET', `/posts/${post.id}`, { headers: inm ? { 'if-none-match': inm } : {} }) },
      { label: 'REST list', send: (inm?: string) => rest(app.url, 'GET', '/posts?paginate=simple', { headers: inm ? { 'if-none-match': inm } : {} }) },
      { label: 'GraphQL', send: (inm?: string) => gqlGet(app.url, query, { id: post.id }, inm ? { 'if-none-match': inm } : {}) },
    ];
    for (const p of pages) {
      const full = await countFor(() => p.send());
      expect({ page: p.label, status: full.status, versionOnly: full.versionOnly }).toEqual({ page: p.label, status: 200, versionOnly: false });
      const tag = (await p.send()).headers.get('etag')!;
      // The first revalidation reads the version, then builds the page to compare: one statement more than the full answer.
      const first = await countFor(() => p.send(tag));
      expect({ page: p.label, ...first }).toEqual({ page: p.label, status: 304, statements: full.statements + 1, versionOnly: false });
      // From then on, while nothing changes: the version statement alone.
      for (let i = 0; i < 3; i++) expect({ page: p.label, ...(await countFor(() => p.send(tag))) }).toEqual({ page: p.label, status: 304, statements: 1, versionOnly: true });
      // Another tag, or an authenticated caller, gets the page as ever.
      expect((await p.send('"other"')).status).toBe(200);
    }

    // A comment written through the other instance: every page is built again, at once, and is new.
    const tags = await Promise.all(pages.map(async (p) => (await p.send()).headers.get('etag')!));
    await Promise.all(pages.map(async (p, i) => expect((await countFor(() => p.send(tags[i]))).status).toBe(304)));
    await gqlPost(other.url, 'mutation($postId: Int!) { addComment(postId: $postId, body: "changes the version") { id } }', { postId: post.id }, author.token);
    for (const [i, p] of pages.entries()) {
      const res = await p.send(tags[i]);
      expect({ page: p.label, status: res.status }).toEqual({ page: p.label, status: 200 });
      expect(res.headers.get('etag')).not.toBe(tags[i]);
    }
  });

  it('a change that leaves the page as it was still answers 304 (after building it), and the version grows once per committed transaction', async () => {
    const post = await buildPost(app, author.user, { published: true });
    const tag = (await rest(app.url, 'GET', `/posts/${post.id}`)).headers.get('etag')!;
    const version = () => new Revalidation(app.orm).version();
    const before = await version();
    // A comment on another post changes the version, not this page.
    const elsewhere = await buildPost(app, author.user);
    expect((await rest(app.url, 'POST', `/posts/${elsewhere.id}/comments`, { token: author.token, body: { body: 'elsewhere' } })).status).toBe(201);
    const res = await countFor(() => rest(app.url, 'GET', `/posts/${post.id}`, { headers: { 'if-none-match': tag } }));
    expect({ status: res.status, versionOnly: res.versionOnly }).toEqual({ status: 304, versionOnly: false });
    // buildPost (one flush) and the comment (one transaction): two commits.
    expect(BigInt(await version()) - BigInt(before)).toBe(2n);
  });
});
