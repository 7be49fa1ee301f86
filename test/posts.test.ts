import { Client } from 'pg';
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { buildComment, buildPost, ISO, POST_FIELDS, sql, untilOneRow } from './support/blog';

let app: TestApp;
let api: ReturnType<typeof clients>;

beforeAll(async () => {
  app = await startTestApp();
  api = clients(app.url);
});
afterAll(() => app.close());

const gqlPost = (op: string, args: string) => `mutation { ${op}(${args}) { ${POST_FIELDS} } }`;

describe('POST /posts and createPost', () => {
  it('401 without a token on both surfaces', async () => {
    const r = await api.rest('POST', '/posts', { body: { title: 'x', body: 'y' } });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ message: 'Unauthenticated' });
    const g = await api.gql(`mutation { createPost(title: "x", body: "y") { id } }`);
    expect(g.errors?.[0]).toMatchObject({ message: 'Unauthenticated', extensions: { code: 'UNAUTHENTICATED' } });
  });

  it('201 the full post with author, empty comments and slug; user_id from the token', async () => {
    const { user, token } = await buildUser(app, { name: 'Writer' });
    const r = await api.rest('POST', '/posts', { token, body: { title: 'Hello World', body: 'Text', user_id: 999, published: true, slug: 'x' } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(Number),
      user_id: user.id,
      title: 'Hello World',
      slug: 'hello-world',
      body: 'Text',
      published: false,
      published_at: null,
      created_at: ISO,
      updated_at: ISO,
      deleted_at: null,
      user: { id: user.id, name: 'Writer' },
      comments: [],
      comments_count: 0,
    });
    const g = await api.gql(`mutation { createPost(title: "Hello World", body: "Text") { ${POST_FIELDS} } }`, undefined, { token });
    expect(g.data.createPost).toMatchObject({ userId: user.id, slug: 'hello-world-2', published: false, publishedAt: null, user: { id: user.id, name: 'Writer' }, comments: [], commentsCount: 0 });
  });

  it('422 for missing, empty, too long and wrongly typed fields, every problem listed', async () => {
    const { token } = await buildUser(app);
    const r = await api.rest('POST', '/posts', { token, body: {} });
    expect(r.status).toBe(422);
    expect(r.body).toEqual({ message: 'Validation failed', errors: [{ field: 'title', message: 'title is required' }, { field: 'body', message: 'body is required' }] });
    const long = await api.rest('POST', '/posts', { token, body: { title: 'a'.repeat(256), body: 'b'.repeat(100_001) } });
    expect(long.status).toBe(422);
    expect(long.body.errors.map((e: { field: string }) => e.field)).toEqual(['title', 'body']);
    const typed = await api.rest('POST', '/posts', { token, body: { title: 5, body: ['x'] } });
    expect(typed.status).toBe(422);
    const notObject = await api.rest('POST', '/posts', { token, body: [1] });
    expect(notObject.status).toBe(422);
    expect(notObject.body.errors).toEqual([{ field: null, message: 'Body must be a JSON object' }]);
    const edge = await api.rest('POST', '/posts', { token, body: { title: 'a'.repeat(255), body: 'b'.repeat(100_000) } });
    expect(edge.status).toBe(201);
    const g = await api.gql(`mutation { createPost(title: "  ", body: "x") { id } }`, undefined, { token });
    expect(g.errors?.[0]).toMatchObject({ message: 'Validation failed', extensions: { code: 'BAD_USER_INPUT', errors: [{ field: 'title', message: 'title is required' }] } });
  });

  it('slugs: folded accents, dashes, 200 chars, `post` when empty, -2 -3 counting trashed posts', async () => {
    const { token } = await buildUser(app);
    const slug = async (title: string) => (await api.rest('POST', '/posts', { token, body: { title, body: 'b' } })).body.slug;
    expect(await slug('  Crème Brûlée: à la carte!  ')).toBe('creme-brulee-a-la-carte');
    expect(await slug('Ünïcödé — ÆØ ß')).toBe('unicode');
    expect(await slug('!!!')).toBe('post');
    expect(await slug('日本語')).toBe('post-2');
    expect(await slug('x'.repeat(255))).toBe('x'.repeat(200));
    const first = await api.rest('POST', '/posts', { token, body: { title: 'Trash Me', body: 'b' } });
    expect(first.body.slug).toBe('trash-me');
    expect((await api.rest('DELETE', `/posts/${first.body.id}`, { token })).status).toBe(200);
    expect(await slug('Trash me')).toBe('trash-me-2');
    expect(await slug('TRASH ME')).toBe('trash-me-3');
  });

  it('slugs stay within 200 characters with a suffix: a title of 300 slug characters twice, then many times', async () => {
    const { token } = await buildUser(app);
    const create = async (title: string) => {
      const r = await api.rest('POST', '/posts', { token, body: { title, body: 'b' } });
      expect(r.status).toBe(201);
      return r.body.slug as string;
    };
    // Titles stop at 255 characters, but NFKD unfolds a ligature into several letters: 'ﬃ' → 'ffi'.
    const title = 'Long ' + 'ﬃ'.repeat(100);
    const w = (n: number) => 'ffi'.repeat(100).slice(0, n);
    const first = await create(title);
    const second = await create(title);
    expect(first).toBe('long-' + w(195));
    expect(second).toBe('long-' + w(193) + '-2');
    const later: string[] = [];
    for (let i = 0; i < 9; i++) later.push(await create(title));
    expect(later.at(-1)).toBe('long-' + w(192) + '-11');
    const all = [first, second, ...later];
    for (const s of all) expect(s.length).toBeLessThanOrEqual(200);
    expect(new Set(all).size).toBe(11);
    // The longest title there is, twice.
    expect(await create('z'.repeat(255))).toBe('z'.repeat(200));
    expect(await create('z'.repeat(255))).toBe('z'.repeat(198) + '-2');
    // Where the cut lands just after a dash, the dash goes too.
    const dashed = 'a'.repeat(197) + ' bcd';
    expect(await create(dashed)).toBe('a'.repeat(197) + '-bc');
    expect(await create(dashed)).toBe('a'.repeat(197) + '-2');
  });

  it('a title that looks like a suffixed slug of another does not move the counter', async () => {
    const { token } = await buildUser(app);
    const slug = async (title: string) => (await api.rest('POST', '/posts', { token, body: { title, body: 'b' } })).body.slug;
    expect(await slug('Sibling 07')).toBe('sibling-07');
    expect(await slug('Sibling x 9')).toBe('sibling-x-9');
    expect(await slug('Sibling')).toBe('sibling');
    expect(await slug('Sibling')).toBe('sibling-2');
    expect(await slug('Sibling 3')).toBe('sibling-3');
    expect(await slug('Sibling')).toBe('sibling-4');
  });

  it('concurrent creates with one title all succeed with distinct slugs (60 at once: more than any retry cap)', async () => {
    const { token } = await buildUser(app);
    app.sql.length = 0;
    const results = await Promise.all(
      Array.from({ length: 60 }, () => api.rest('POST', '/posts', { token, body: { title: 'Race Title', body: 'b' } })),
    );
    // Creates of one title queue on their advisory lock: no insert is wasted on a slug another took.
    expect(app.sql.filter((l) => /insert into "posts"/.test(l))).toHaveLength(60);
    expect(results.map((r) => r.status)).toEqual(Array(60).fill(201));
    const slugs = results.map((r) => r.body.slug).sort();
    expect(new Set(slugs).size).toBe(60);
    expect(slugs).toEqual(['race-title', ...Array.from({ length: 59 }, (_, i) => `race-title-${i + 2}`)].sort());
    const g = await Promise.all(Array.from({ length: 5 }, () => api.gql(`mutation { createPost(title: "Race Title", body: "b") { slug } }`, undefined, { token })));
    expect(g.every((r) => !r.errors)).toBe(true);
    expect(new Set(g.map((r) => r.data.createPost.slug)).size).toBe(5);
  });
  it('a slug taken under another lock (another title) while we insert: the create looks again and succeeds', async () => {
    const { user, token } = await buildUser(app);
    expect((await api.rest('POST', '/posts', { token, body: { title: 'Clash', body: 'b' } })).body.slug).toBe('clash');
    // Another session inserts `clash-2` (as "Clash 2" would) and keeps it uncommitted.
    const other = new Client({ connectionString: app.databaseUrl });
    await other.connect();
    try {
      await other.query('begin');
      await other.query(`insert into posts (created_at, updated_at, user_id, title, slug, body) values (now(), now(), $1, 'Clash 2', 'clash-2', 'b')`, [user.id]);
      const pending = api.rest('POST', '/posts', { token, body: { title: 'Clash', body: 'b' } });
      // Until our insert waits on that row, which its lookup could not see.
      const waited = (await untilOneRow(() => other.query(`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and wait_event = 'transactionid'`))) !== undefined;
      expect(waited).toBe(true);
      await other.query('commit');
      const r = await pending;
      expect({ status: r.status, slug: r.body.slug }).toEqual({ status: 201, slug: 'clash-3' });
    } finally {
      await other.end();
    }
  });
});

describe('GET /posts/:id and post(id)', () => {
  it('200 with author and comments oldest first, each with its author', async () => {
    const { user: author } = await buildUser(app, { name: 'Author' });
    const { user: c1 } = await buildUser(app, { name: 'First' });
    const { user: c2 } = await buildUser(app, { name: 'Second' });
    const post = await buildPost(app, author);
    const a = await buildComment(app, post, c1, 'one');
    const b = await buildComment(app, post, c2, 'two');
    const r = await api.rest('GET', `/posts/${post.id}`);
    expect(r.status).toBe(200);
    expect(r.body.user).toEqual({ id: author.id, name: 'Author' });
    expect(r.body.comments).toEqual([
      { id: a.id, post_id: post.id, user_id: c1.id, body: 'one', created_at: ISO, updated_at: ISO, user: { id: c1.id, name: 'First' } },
      { id: b.id, post_id: post.id, user_id: c2.id, body: 'two', created_at: ISO, updated_at: ISO, user: { id: c2.id, name: 'Second' } },
    ]);
    expect(r.body.comments_count).toBe(2);
    const g = await api.gql(`query($id: Int!) { post(id: $id) { ${POST_FIELDS} } }`, { id: post.id });
    expect(g.data.post.comments.map((c: { user: { name: string } }) => c.user.name)).toEqual(['First', 'Second']);
    expect(g.data.post.commentsCount).toBe(2);
  });

  it('a soft-deleted author or commenter shows as null', async () => {
    const { user: author } = await buildUser(app);
    const { user: commenter } = await buildUser(app);
    const post = await buildPost(app, author);
    await buildComment(app, post, commenter);
    await sql(app, 'update users set deleted_at = now() where id in (?, ?)', [author.id, commenter.id]);
    const r = await api.rest('GET', `/posts/${post.id}`);
    expect(r.status).toBe(200);
    expect(r.body.user).toBeNull();
    expect(r.body.comments[0].user).toBeNull();
    expect(r.body.comments[0].user_id).toBe(commenter.id);
    const g = await api.gql(`query($id: Int!) { post(id: $id) { user { id } comments { user { id } } } }`, { id: post.id });
    expect(g.data.post).toEqual({ user: null, comments: [{ user: null }] });
  });

  it.each(['999999', '0', '-1', 'abc', '2147483648', '1.5'])('404 Post not found for id %s', async (id) => {
    const r = await api.rest('GET', `/posts/${id}`);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ message: 'Post not found' });
  });

  it('404 for a trashed post, on both surfaces', async () => {
    const { user } = await buildUser(app);
    const post = await buildPost(app, user, { deletedAt: new Date() });
    expect((await api.rest('GET', `/posts/${post.id}`)).status).toBe(404);
    const g = await api.gql(`{ post(id: ${post.id}) { id } }`);
    expect(g.errors?.[0]).toMatchObject({ message: 'Post not found', extensions: { code: 'NOT_FOUND' } });
    const neg = await api.gql(`{ post(id: -5) { id } }`);
    expect(neg.errors?.[0]).toMatchObject({ message: 'Post not found', extensions: { code: 'NOT_FOUND' } });
  });

  it('a missing post is null with its error at its path; sibling fields keep their data', async () => {
    const { user } = await buildUser(app);
    const post = await buildPost(app, user);
    const g = await api.gql(`{ postsSimple(page: 1) { hasMore } here: post(id: ${post.id}) { id } gone: post(id: 2147483000) { id } }`);
    expect(g.data).toEqual({ postsSimple: { hasMore: expect.any(Boolean) }, here: { id: post.id }, gone: null });
    expect(g.errors).toHaveLength(1);
    expect(g.errors?.[0]).toMatchObject({ message: 'Post not found', path: ['gone'], extensions: { code: 'NOT_FOUND' } });
  });
});

describe('publish, delete, restore: 401 → 404 → 403', () => {
  const routes = [
    ['PATCH', 'publish', (id: number | string) => `/posts/${id}/publish`, 'publishPost'],
    ['DELETE', 'delete', (id: number | string) => `/posts/${id}`, 'deletePost'],
    ['PATCH', 'restore', (id: number | string) => `/posts/${id}/restore`, 'restorePost'],
  ] as const;

  it.each(routes)('%s %s: 401 unauthenticated, 404 missing, 403 other user, on both surfaces', async (method, _n, path, op) => {
    const { user: owner } = await buildUser(app);
    const { token: other } = await buildUser(app);
    const post = await buildPost(app, owner);
    const selection = op === 'deletePost' ? '{ message }' : '{ id }';
    let r = await api.rest(method, path(post.id));
    expect([r.status, r.body]).toEqual([401, { message: 'Unauthenticated' }]);
    r = await api.rest(method, path('nope'));
    expect([r.status, r.body]).toEqual([401, { message: 'Unauthenticated' }]);
    r = await api.rest(method, path(99999999), { token: other });
    expect([r.status, r.body]).toEqual([404, { message: 'Post not found' }]);
    r = await api.rest(method, path('0'), { token: other });
    expect([r.status, r.body]).toEqual([404, { message: 'Post not found' }]);
    r = await api.rest(method, path(post.id), { token: other });
    expect([r.status, r.body]).toEqual([403, { message: 'Forbidden' }]);
    let g = await api.gql(`mutation { ${op}(id: ${post.id}) ${selection} }`);
    expect(g.errors?.[0]).toMatchObject({ message: 'Unauthenticated', extensions: { code: 'UNAUTHENTICATED' } });
    g = await api.gql(`mutation { ${op}(id: 99999999) ${selection} }`, undefined, { token: other });
    expect(g.errors?.[0]).toMatchObject({ message: 'Post not found', extensions: { code: 'NOT_FOUND' } });
    g = await api.gql(`mutation { ${op}(id: ${post.id}) ${selection} }`, undefined, { token: other });
    expect(g.errors?.[0]).toMatchObject({ message: 'Forbidden', extensions: { code: 'FORBIDDEN' } });
  });

  it('publish sets published and published_at; publishing again returns it unchanged', async () => {
    const { user, token } = await buildUser(app);
    const post = await buildPost(app, user);
    const r = await api.rest('PATCH', `/posts/${post.id}/publish`, { token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: post.id, published: true, published_at: ISO, user: { id: user.id }, comments: [], comments_count: 0 });
    const again = await api.rest('PATCH', `/posts/${post.id}/publish`, { token });
    expect(again.body).toEqual(r.body);
    const g = await api.gql(gqlPost('publishPost', `id: ${post.id}`), undefined, { token });
    expect(g.data.publishPost.publishedAt).toBe(r.body.published_at);
  });

  it('moderators and admins may act on posts of others', async () => {
    const { user } = await buildUser(app);
    const { token: mod } = await buildUser(app, { role: 'moderator' });
    const { token: admin } = await buildUser(app, { role: 'admin' });
    const post = await buildPost(app, user);
    expect((await api.rest('PATCH', `/posts/${post.id}/publish`, { token: mod })).status).toBe(200);
    expect((await api.rest('DELETE', `/posts/${post.id}`, { token: admin })).status).toBe(200);
    expect((await api.rest('PATCH', `/posts/${post.id}/restore`, { token: mod })).status).toBe(200);
  });

  it('delete soft-deletes (200 Post deleted); a trashed post is 404 for delete, publish and comments; restore brings it back', async () => {
    const { user, token } = await buildUser(app);
    const post = await buildPost(app, user);
    const d = await api.rest('DELETE', `/posts/${post.id}`, { token });
    expect([d.status, d.body]).toEqual([200, { message: 'Post deleted' }]);
    const [row] = await sql(app, 'select deleted_at from posts where id = ?', [post.id]);
    expect(row.deleted_at).not.toBeNull();
    expect((await api.rest('DELETE', `/posts/${post.id}`, { token })).body).toEqual({ message: 'Post not found' });
    expect((await api.rest('PATCH', `/posts/${post.id}/publish`, { token })).status).toBe(404);
    const c = await api.rest('POST', `/posts/${post.id}/comments`, { token, body: { body: 'hi' } });
    expect([c.status, c.body]).toEqual([404, { message: 'Post not found' }]);
    const rs = await api.rest('PATCH', `/posts/${post.id}/restore`, { token });
    expect(rs.status).toBe(200);
    expect(rs.body).toMatchObject({ id: post.id, deleted_at: null, user: { id: user.id } });
    const again = await api.rest('PATCH', `/posts/${post.id}/restore`, { token });
    expect(again.body).toEqual(rs.body);
    const g = await api.gql(`mutation { deletePost(id: ${post.id}) { message } }`, undefined, { token });
    expect(g.data).toEqual({ deletePost: { message: 'Post deleted' } });
    const gr = await api.gql(gqlPost('restorePost', `id: ${post.id}`), undefined, { token });
    expect(gr.data.restorePost).toMatchObject({ id: post.id, deletedAt: null });
  });
});

describe('POST /posts/:id/comments and addComment', () => {
  it('401 → 404 → 422, then 201 the comment with its author', async () => {
    const { user } = await buildUser(app);
    const { user: me, token } = await buildUser(app, { name: 'Commenter' });
    const post = await buildPost(app, user);
    let r = await api.rest('POST', `/posts/${post.id}/comments`, { body: {} });
    expect([r.status, r.body]).toEqual([401, { message: 'Unauthenticated' }]);
    r = await api.rest('POST', `/posts/999999/comments`, { token, body: {} });
    expect([r.status, r.body]).toEqual([404, { message: 'Post not found' }]);
    r = await api.rest('POST', `/posts/x/comments`, { token, body: { body: 'ok' } });
    expect([r.status, r.body]).toEqual([404, { message: 'Post not found' }]);
    r = await api.rest('POST', `/posts/${post.id}/comments`, { token, body: { body: '' } });
    expect([r.status, r.body]).toEqual([422, { message: 'Validation failed', errors: [{ field: 'body', message: 'body is required' }] }]);
    r = await api.rest('POST', `/posts/${post.id}/comments`, { token, body: { body: 'x'.repeat(10_001) } });
    expect(r.status).toBe(422);
    r = await api.rest('POST', `/posts/${post.id}/comments`, { token, body: { body: 'Nice', post_id: 1, user_id: 1 } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ id: expect.any(Number), post_id: post.id, user_id: me.id, body: 'Nice', created_at: ISO, updated_at: ISO, user: { id: me.id, name: 'Commenter' } });
    const g = await api.gql(`mutation($p: Int!) { addComment(postId: $p, body: "Also") { id postId userId body user { id name } } }`, { p: post.id }, { token });
    expect(g.data.addComment).toMatchObject({ postId: post.id, userId: me.id, body: 'Also', user: { id: me.id, name: 'Commenter' } });
    const ge = await api.gql(`mutation { addComment(postId: 999999, body: "") { id } }`, undefined, { token });
    expect(ge.errors?.[0]).toMatchObject({ message: 'Post not found', extensions: { code: 'NOT_FOUND' } });
    const detail = await api.rest('GET', `/posts/${post.id}`);
    expect(detail.body.comments.map((c: { body: string }) => c.body)).toEqual(['Nice', 'Also']);
    expect(detail.body.comments_count).toBe(2);
  });
});

describe('GET /posts filters', () => {
  it('published true|1|yes|on filters by the published scope; false|0|no|off does not; others 422', async () => {
    const { user } = await buildUser(app);
    const pub = await buildPost(app, user, { published: true });
    const draft = await buildPost(app, user);
    // published true but no published_at: outside the published scope
    const half = await buildPost(app, user);
    await sql(app, 'update posts set published = true where id = ?', [half.id]);
    for (const v of ['true', '1', 'yes', 'on', 'TRUE']) {
      const r = await api.rest('GET', `/posts?author=${user.id}&published=${v}`);
      expect(r.status).toBe(200);
      expect(r.body.data.map((p: { id: number }) => p.id)).toEqual([pub.id]);
    }
    for (const v of ['false', '0', 'no', 'off']) {
      const r = await api.rest('GET', `/posts?author=${user.id}&published=${v}`);
      expect(r.body.data.map((p: { id: number }) => p.id)).toEqual([half.id, draft.id, pub.id]);
    }
    const bad = await api.rest('GET', `/posts?published=maybe`);
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].field).toBe('published');
    const g = await api.gql(`query($a: Int) { posts(author: $a, published: true) { total data { id } } postsSimple(author: $a, published: false) { data { id } } }`, { a: user.id });
    expect(g.data.posts).toEqual({ total: 1, data: [{ id: pub.id }] });
    expect(g.data.postsSimple.data).toHaveLength(3);
  });

  it('author filters by user id; non-positive-integer author → 422 on both surfaces', async () => {
    const { user: a } = await buildUser(app);
    const { user: b } = await buildUser(app);
    const pa = await buildPost(app, a);
    await buildPost(app, b);
    const r = await api.rest('GET', `/posts?author=${a.id}`);
    expect(r.body.data.map((p: { id: number }) => p.id)).toEqual([pa.id]);
    expect(r.body.total).toBe(1);
    for (const v of ['0', '-1', 'abc', '1.5']) {
      const bad = await api.rest('GET', `/posts?author=${v}`);
      expect([bad.status, bad.body]).toEqual([422, { message: 'Validation failed', errors: [{ field: 'author', message: 'author must be a positive integer' }] }]);
    }
    const g = await api.gql(`{ posts(author: 0) { total } }`);
    expect(g.errors?.[0]).toMatchObject({ message: 'Validation failed', extensions: { code: 'BAD_USER_INPUT', errors: [{ field: 'author', message: 'author must be a positive integer' }] } });
  });

  it('lists are ordered created_at desc, id desc, 10 per page, every item fully embedded', async () => {
    const { user } = await buildUser(app, { name: 'Lister' });
    const t = new Date('2020-01-01T00:00:00Z');
    const same1 = await buildPost(app, user, { createdAt: t });
    const same2 = await buildPost(app, user, { createdAt: t });
    const newer = await buildPost(app, user, { createdAt: new Date('2021-01-01T00:00:00Z') });
    await buildComment(app, newer, user, 'c');
    const r = await api.rest('GET', `/posts?author=${user.id}`);
    expect(r.body).toMatchObject({ total: 3, perPage: 10, currentPage: 1, lastPage: 1, from: 1, to: 3, nextPage: null });
    expect(r.body.data.map((p: { id: number }) => p.id)).toEqual([newer.id, same2.id, same1.id]);
    expect(r.body.data[0]).toMatchObject({ user: { id: user.id, name: 'Lister' }, comments_count: 1, comments: [{ body: 'c', user: { id: user.id, name: 'Lister' } }] });
    expect(Object.keys(r.body.data[0]).sort()).toEqual(['body', 'comments', 'comments_count', 'created_at', 'deleted_at', 'id', 'published', 'published_at', 'slug', 'title', 'updated_at', 'user', 'user_id']);
  });
});

describe('routing edges', () => {
  it('a known path with the wrong method → 405 with Allow', async () => {
    const r = await api.rest('PUT', '/posts/1');
    expect([r.status, r.body]).toEqual([405, { message: 'Method not allowed' }]);
    expect(r.headers.get('allow')).toBe('DELETE, GET, HEAD, PATCH');
    const t = await api.rest('POST', '/trash');
    expect(t.status).toBe(405);
    expect(t.headers.get('allow')).toBe('DELETE, GET, HEAD');
  });

  it('trashed posts leave GET /posts and its total', async () => {
    const { user, token } = await buildUser(app);
    const keep = await buildPost(app, user);
    const gone = await buildPost(app, user);
    await api.rest('DELETE', `/posts/${gone.id}`, { token });
    const r = await api.rest('GET', `/posts?author=${user.id}`);
    expect(r.body.total).toBe(1);
    expect(r.body.data.map((p: { id: number }) => p.id)).toEqual([keep.id]);
  });
});

describe('User.posts', () => {
  it('lists a user\'s active posts, newest first, through me', async () => {
    const { user, token } = await buildUser(app);
    const p1 = await buildPost(app, user, { createdAt: new Date('2020-01-01Z') });
    const p2 = await buildPost(app, user, { createdAt: new Date('2020-02-01Z') });
    await buildPost(app, user, { deletedAt: new Date() });
    const g = await api.gql(`{ me { id posts { id user { id } } } }`, undefined, { token });
    expect(g.data.me.posts).toEqual([{ id: p2.id, user: { id: user.id } }, { id: p1.id, user: { id: user.id } }]);
  });
});

/**
 * GraphQL runs the fields of a mutation one after the other, and the per-request loaders would
 * answer a second read of the same key from the first read's cache: every write clears them.
 */
describe('one document that reads, writes and reads again sees its own writes', () => {
  it('comments: publishPost → addComment ×2 → publishPost counts the new comments', async () => {
    const { token } = await buildUser(app);
    const post = (await api.gql(`mutation { createPost(title: "Stale", body: "b") { id } }`, undefined, { token })).data.createPost;
    const doc = `mutation($id: Int!) {
      before: publishPost(id: $id) { commentsCount comments { body } }
      one: addComment(postId: $id, body: "one") { id }
      two: addComment(postId: $id, body: "two") { id }
      after: publishPost(id: $id) { commentsCount comments { body user { id } } }
    }`;
    const g = await api.gql(doc, { id: post.id }, { token });
    expect(g.errors).toBeUndefined();
    expect(g.data.before).toEqual({ commentsCount: 0, comments: [] });
    expect(g.data.after.commentsCount).toBe(2);
    expect(g.data.after.comments.map((c: { body: string }) => c.body)).toEqual(['one', 'two']);
  });

  it('User.posts after create, publish, delete, restore and restore from trash', async () => {
    const { user, token } = await buildUser(app, { role: 'admin' });
    const p = await buildPost(app, user, { createdAt: new Date('2020-01-01Z') });
    // A reader of User.posts inside a mutation: restoring an active user returns it unchanged
    // (one account mutation such as login per document is the limit, CONTRACT 12).
    const login = `restoreUser(id: ${user.id}) { posts { id published } }`;
    const doc = `mutation($p: Int!) {
      l0: ${login}
      created: createPost(title: "Fresh", body: "b") { id }
      l1: ${login}
      published: publishPost(id: $p) { id }
      l2: ${login}
      deleted: deletePost(id: $p) { message }
      l3: ${login}
      restored: restorePost(id: $p) { id }
      l4: ${login}
      again: deletePost(id: $p) { message }
      l5: ${login}
      fromTrash: restoreFromTrash(id: $p) { id }
      l6: ${login}
    }`;
    const g = await api.gql(doc, { p: p.id }, { token });
    expect(g.errors).toBeUndefined();
    const posts = (k: string) => g.data[k].posts;
    const fresh = { id: g.data.created.id, published: false };
    expect(posts('l0')).toEqual([{ id: p.id, published: false }]);
    expect(posts('l1')).toEqual([fresh, { id: p.id, published: false }]);
    expect(posts('l2')).toEqual([fresh, { id: p.id, published: true }]);
    expect(posts('l3')).toEqual([fresh]);
    expect(posts('l4')).toEqual([fresh, { id: p.id, published: true }]);
    expect(posts('l5')).toEqual([fresh]);
    expect(posts('l6')).toEqual([fresh, { id: p.id, published: true }]);
  });
});
