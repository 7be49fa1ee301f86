import jwt from 'jsonwebtoken';
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser, uniqueEmail } from './support/factories';
import { buildComment, buildPost, sql } from './support/blog';
import { asTenant, freshTenant } from './support/tenants';
import { startMailbox, type Mailbox } from './support/mailbox';

/**
 * Contract-conformance pass (CONTRACT 4, 5, 7, 8, 12, 13): exact key sets, ids that are not
 * positive int32, 405 + Allow on every known path, fields never taken from a body, and the
 * GraphQL code of each operation's errors.
 */
let app: TestApp;
let mailbox: Mailbox;
let api: ReturnType<typeof clients>;
let admin: { token: string; id: number };
let mod: { token: string; id: number };
let writer: { token: string; id: number };
let other: { token: string; id: number };

beforeAll(async () => {
  mailbox = await startMailbox();
  app = await startTestApp({ SMTP_URL: mailbox.url });
  api = clients(app.url);
  const mk = async (role: 'admin' | 'moderator' | 'user') => {
    const u = await buildUser(app, { role });
    return { token: u.token, id: u.user.id };
  };
  admin = await mk('admin');
  mod = await mk('moderator');
  writer = await mk('user');
  other = await mk('user');
});
afterAll(async () => {
  await app.close();
  await mailbox.close();
});

const USER_KEYS = ['created_at', 'email', 'email_verified_at', 'id', 'name', 'role', 'updated_at'];
const POST_KEYS = ['body', 'comments', 'comments_count', 'created_at', 'deleted_at', 'id', 'published', 'published_at', 'slug', 'title', 'updated_at', 'user', 'user_id'];
const COMMENT_KEYS = ['body', 'created_at', 'id', 'post_id', 'updated_at', 'user', 'user_id'];
const TENANT_POST_KEYS = ['body', 'created_at', 'id', 'tenant_id', 'title', 'updated_at'];
const keys = (o: object) => Object.keys(o).sort();
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function expectUser(u: any) {
  expect(keys(u)).toEqual(USER_KEYS);
  expect(u.created_at).toMatch(ISO);
  expect(u.updated_at).toMatch(ISO);
}
function expectPost(p: any) {
  expect(keys(p)).toEqual(POST_KEYS);
  expect(p.created_at).toMatch(ISO);
  if (p.user !== null) expect(keys(p.user)).toEqual(['id', 'name']);
  expect(p.comments_count).toBe(p.comments.length);
  p.comments.forEach(expectComment);
}
function expectComment(c: any) {
  expect(keys(c)).toEqual(COMMENT_KEYS);
  expect(c.created_at).toMatch(ISO);
  if (c.user !== null) expect(keys(c.user)).toEqual(['id', 'name']);
}

describe('CONTRACT 4: REST key sets', () => {
  it('user: register, login, /auth/me, /admin/users, restore', async () => {
    const email = uniqueEmail('shape');
    const reg = await api.rest('POST', '/auth/register', { body: { name: 'Shape', email, password: 'password123' } });
    expect(reg.status).toBe(201);
    expect(keys(reg.body)).toEqual(['token', 'user']);
    expectUser(reg.body.user);
    const login = await api.rest('POST', '/auth/login', { body: { email, password: 'password123' } });
    expect(keys(login.body)).toEqual(['token', 'user']);
    expectUser(login.body.user);
    const me = await api.rest('GET', '/auth/me', { token: login.body.token });
    expectUser(me.body);
    const list = await api.rest('GET', '/admin/users', { token: admin.token });
    expect(keys(list.body)).toEqual(['currentPage', 'data', 'from', 'lastPage', 'nextPage', 'perPage', 'to', 'total']);
    list.body.data.forEach(expectUser);
    const simple = await api.rest('GET', '/admin/users?paginate=simple', { token: admin.token });
    expect(keys(simple.body)).toEqual(['data', 'hasMore']);
    const cursor = await api.rest('GET', '/admin/users?paginate=cursor', { token: admin.token });
    expect(keys(cursor.body)).toEqual(['data', 'hasNextPage', 'hasPrevPage', 'nextCursor', 'path', 'perPage', 'prevCursor']);
    cursor.body.data.forEach(expectUser);
    const del = await api.rest('DELETE', `/admin/users/${reg.body.user.id}`, { token: admin.token });
    expect([del.status, del.body]).toEqual([200, { message: 'User deleted' }]);
    const restored = await api.rest('PATCH', `/admin/users/${reg.body.user.id}/restore`, { token: admin.token });
    expect(restored.status).toBe(200);
    expectUser(restored.body);
  });

  it('post and comment: create, comment, detail, publish, lists, delete, restore, trash', async () => {
    const created = await api.rest('POST', '/posts', { token: writer.token, body: { title: 'Shape post', body: 'b' } });
    expect(created.status).toBe(201);
    expectPost(created.body);
    expect(created.body).toMatchObject({ user_id: writer.id, published: false, published_at: null, deleted_at: null, comments: [], comments_count: 0, user: { id: writer.id } });
    const id = created.body.id;
    const c = await api.rest('POST', `/posts/${id}/comments`, { token: other.token, body: { body: 'hi' } });
    expect(c.status).toBe(201);
    expectComment(c.body);
    expect(c.body).toMatchObject({ post_id: id, user_id: other.id, user: { id: other.id } });
    const detail = await api.rest('GET', `/posts/${id}`);
    expectPost(detail.body);
    expect(detail.body.comments_count).toBe(1);
    const pub = await api.rest('PATCH', `/posts/${id}/publish`, { token: writer.token });
    expectPost(pub.body);
    expect(pub.body.published_at).toMatch(ISO);
    const list = await api.rest('GET', `/posts?author=${writer.id}`);
    list.body.data.forEach(expectPost);
    const del = await api.rest('DELETE', `/posts/${id}`, { token: writer.token });
    expect([del.status, del.body]).toEqual([200, { message: 'Post deleted' }]);
    const trash = await api.rest('GET', '/trash', { token: mod.token });
    trash.body.data.forEach(expectPost);
    expect(trash.body.data.find((p: any) => p.id === id).deleted_at).toMatch(ISO);
    const tc = await api.rest('GET', '/trash?paginate=cursor', { token: mod.token });
    tc.body.data.forEach(expectPost);
    const restored = await api.rest('PATCH', `/posts/${id}/restore`, { token: writer.token });
    expectPost(restored.body);
    expect(restored.body.deleted_at).toBeNull();
    await api.rest('DELETE', `/posts/${id}`, { token: writer.token });
    const fromTrash = await api.rest('PATCH', `/trash/${id}/restore`, { token: mod.token });
    expectPost(fromTrash.body);
    const gone = await api.rest('DELETE', `/posts/${id}`, { token: writer.token });
    expect(gone.status).toBe(200);
    const destroyed = await api.rest('DELETE', `/trash/${id}`, { token: mod.token });
    expect([destroyed.status, destroyed.body]).toEqual([200, { message: 'Permanently deleted' }]);
  });

  it('author is null when that user is soft-deleted (post and comment)', async () => {
    const ghost = await buildUser(app);
    const post = await buildPost(app, ghost.user);
    await buildComment(app, post, ghost.user);
    await sql(app, 'update users set deleted_at = now() where id = ?', [ghost.user.id]);
    const r = await api.rest('GET', `/posts/${post.id}`);
    expectPost(r.body);
    expect(r.body.user).toBeNull();
    expect(r.body.comments[0].user).toBeNull();
    const g = await api.gql('query($id: Int!) { post(id: $id) { user { id } comments { user { id } } } }', { id: post.id });
    expect(g.data).toEqual({ post: { user: null, comments: [{ user: null }] } });
  });

  it('tenant post', async () => {
    const t = freshTenant();
    const r = await api.rest('POST', '/tenant/posts', { headers: asTenant(t), body: { title: 'x', body: 'y' } });
    expect(r.status).toBe(201);
    expect(keys(r.body)).toEqual(TENANT_POST_KEYS);
    const list = await api.rest('GET', '/tenant/posts', { headers: asTenant(t) });
    expect(Array.isArray(list.body)).toBe(true);
    expect(keys(list.body[0])).toEqual(TENANT_POST_KEYS);
    const all = await api.rest('GET', '/tenant/admin/posts', { token: admin.token });
    expect(keys(all.body[0])).toEqual(TENANT_POST_KEYS);
  });
});

describe('CONTRACT 7: ids that are not positive 32-bit integers → the resource 404', () => {
  const BAD = ['0', 'abc', '2147483648', '-1', '1.5', '1e3', '99999999999'];
  const routes: [string, string, () => string, string][] = [
    ['GET', '/posts/:id', () => writer.token, 'Post not found'],
    ['PATCH', '/posts/:id/publish', () => writer.token, 'Post not found'],
    ['DELETE', '/posts/:id', () => writer.token, 'Post not found'],
    ['PATCH', '/posts/:id/restore', () => writer.token, 'Post not found'],
    ['POST', '/posts/:id/comments', () => writer.token, 'Post not found'],
    ['PATCH', '/trash/:id/restore', () => mod.token, 'Not in trash'],
    ['DELETE', '/trash/:id', () => mod.token, 'Not in trash'],
    ['DELETE', '/admin/users/:id', () => admin.token, 'User not found'],
    ['PATCH', '/admin/users/:id/restore', () => admin.token, 'User not found'],
  ];
  it.each(routes)('%s %s', async (method, path, token, message) => {
    for (const bad of BAD) {
      const r = await api.rest(method, path.replace(':id', encodeURIComponent(bad)), { token: token(), body: method === 'POST' ? { body: 'x' } : undefined });
      expect([bad, r.status, r.body]).toEqual([bad, 404, { message }]);
    }
  });
  it('401 comes before 404; role-only routes answer 403 before 404', async () => {
    for (const [method, path] of [['PATCH', '/posts/abc/publish'], ['DELETE', '/posts/0'], ['POST', '/posts/-1/comments'], ['PATCH', '/trash/0/restore'], ['DELETE', '/admin/users/1.5']]) {
      const r = await api.rest(method, path);
      expect([path, r.status, r.body]).toEqual([path, 401, { message: 'Unauthenticated' }]);
    }
    for (const [method, path] of [['PATCH', '/trash/0/restore'], ['DELETE', '/trash/abc'], ['DELETE', '/admin/users/0'], ['PATCH', '/admin/users/abc/restore']]) {
      const r = await api.rest(method, path, { token: writer.token });
      expect([path, r.status, r.body]).toEqual([path, 403, { message: 'Forbidden' }]);
    }
  });
  it('GraphQL: id 0 and -1 are NOT_FOUND with the resource message', async () => {
    const cases: [string, string, string][] = [
      ['query($id: Int!) { post(id: $id) { id } }', writer.token, 'Post not found'],
      ['mutation($id: Int!) { publishPost(id: $id) { id } }', writer.token, 'Post not found'],
      ['mutation($id: Int!) { deletePost(id: $id) { message } }', writer.token, 'Post not found'],
      ['mutation($id: Int!) { restorePost(id: $id) { id } }', writer.token, 'Post not found'],
      ['mutation($id: Int!) { addComment(postId: $id, body: "x") { id } }', writer.token, 'Post not found'],
      ['mutation($id: Int!) { restoreFromTrash(id: $id) { id } }', mod.token, 'Not in trash'],
      ['mutation($id: Int!) { deleteFromTrash(id: $id) { message } }', mod.token, 'Not in trash'],
      ['mutation($id: Int!) { deleteUser(id: $id) { message } }', admin.token, 'User not found'],
      ['mutation($id: Int!) { restoreUser(id: $id) { id } }', admin.token, 'User not found'],
    ];
    for (const [q, token, message] of cases) {
      for (const id of [0, -1]) {
        const g = await api.gql(q, { id }, { token });
        expect([q, id, g.errors?.[0]?.message, g.errors?.[0]?.extensions?.code]).toEqual([q, id, message, 'NOT_FOUND']);
      }
    }
  });
});

describe('CONTRACT 7: 405 + Allow on every known path', () => {
  const paths: [string, string[]][] = [
    ['/auth/register', ['POST']],
    ['/auth/login', ['POST']],
    ['/auth/forgot-password', ['POST']],
    ['/auth/reset-password', ['POST']],
    ['/auth/verify-email/sometoken', ['POST']],
    ['/auth/me', ['GET', 'HEAD', 'PATCH']],
    ['/auth/change-password', ['POST']],
    ['/comments/1', ['DELETE', 'PATCH']],
    ['/auth/resend-verification', ['POST']],
    ['/admin/users', ['GET', 'HEAD']],
    ['/admin/users/1', ['DELETE']],
    ['/admin/users/1/restore', ['PATCH']],
    ['/posts', ['GET', 'HEAD', 'POST']],
    ['/posts/1', ['DELETE', 'GET', 'HEAD', 'PATCH']],
    ['/posts/1/publish', ['PATCH']],
    ['/posts/1/restore', ['PATCH']],
    ['/posts/1/comments', ['POST']],
    ['/trash', ['DELETE', 'GET', 'HEAD']],
    ['/trash/1', ['DELETE']],
    ['/trash/1/restore', ['PATCH']],
    ['/tenant/posts', ['GET', 'HEAD', 'POST']],
    ['/tenant/admin/posts', ['GET', 'HEAD']],
    ['/graphql', ['GET', 'HEAD', 'POST']],
    ['/healthz', ['GET', 'HEAD']],
    ['/readyz', ['GET', 'HEAD']],
  ];
  it.each(paths)('%s', async (path, allowed) => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      if (allowed.includes(method)) continue;
      const r = await api.rest(method, path, { token: admin.token, rawBody: method === 'GET' ? undefined : '{not json' });
      expect([method, r.status, r.body]).toEqual([method, 405, { message: 'Method not allowed' }]);
      const allow = (r.headers.get('allow') ?? '').split(',').map((m) => m.trim()).sort();
      expect(allow).toEqual(allowed);
    }
  });
  it('unknown paths → 404 Not found', async () => {
    for (const path of ['/post', '/posts/1/comments/2', '/admin', '/trash/1/restore/x', '/auth/verify-email']) {
      const r = await api.rest('GET', path);
      expect([path, r.status, r.body]).toEqual([path, 404, { message: 'Not found' }]);
    }
  });
});

describe('CONTRACT 7: published and author query values', () => {
  let author: number;
  let published: number;
  let draft: number;
  beforeAll(async () => {
    const u = await buildUser(app);
    author = u.user.id;
    published = (await buildPost(app, u.user, { published: true })).id;
    draft = (await buildPost(app, u.user)).id;
  });
  it.each(['true', '1', 'yes', 'on'])('published=%s filters', async (v) => {
    const r = await api.rest('GET', `/posts?author=${author}&published=${v}`);
    expect(r.body.data.map((p: any) => p.id)).toEqual([published]);
  });
  it.each(['false', '0', 'no', 'off'])('published=%s does not filter', async (v) => {
    const r = await api.rest('GET', `/posts?author=${author}&published=${v}`);
    expect(r.body.data.map((p: any) => p.id)).toEqual([draft, published]);
  });
  it.each(['published=maybe', 'published=', 'published=2', 'author=0', 'author=abc', 'author=-3', 'author=2147483648', 'author=1.5', 'published=true&published=false', 'author=1&author=2'])('%s → 422', async (q) => {
    const r = await api.rest('GET', `/posts?${q}`);
    expect(r.status).toBe(422);
    expect(r.body.message).toBe('Validation failed');
    expect(r.body.errors[0].field).toBe(q.split('=')[0]);
  });
  it('a repeated published is refused with the filter\'s own message', async () => {
    const r = await api.rest('GET', '/posts?published=true&published=false');
    expect([r.status, r.body.errors]).toEqual([422, [{ field: 'published', message: 'published must be true or false' }]]);
  });
  it('GraphQL Boolean published and Int author', async () => {
    const g = await api.gql('query($a: Int) { t: posts(author: $a, published: true) { data { id } } f: postsSimple(author: $a, published: false) { data { id } } c: postsCursor(author: $a, published: true) { data { id } } }', { a: author });
    expect(g.data).toEqual({ t: { data: [{ id: published }] }, f: { data: [{ id: draft }, { id: published }] }, c: { data: [{ id: published }] } });
    const bad = await api.gql('{ posts(author: 0) { total } }');
    expect(bad.errors?.[0]).toMatchObject({ message: 'Validation failed', extensions: { code: 'BAD_USER_INPUT', errors: [{ field: 'author', message: 'author must be a positive integer' }] } });
  });
});

describe('CONTRACT 7: bodies', () => {
  it('role, ids, user_id, published, tenant_id are never taken from a body; unknown fields are ignored', async () => {
    const reg = await api.rest('POST', '/auth/register', { body: { name: 'Sneaky', email: uniqueEmail('sneaky'), password: 'password123', role: 'admin', id: 1, email_verified_at: '2020-01-01T00:00:00.000Z', extra: { a: 1 } } });
    expect(reg.status).toBe(201);
    expect(reg.body.user).toMatchObject({ role: 'user', email_verified_at: null });
    expect(reg.body.user.id).not.toBe(1);
    const post = await api.rest('POST', '/posts', { token: writer.token, body: { title: 'T', body: 'B', user_id: other.id, published: true, published_at: '2020-01-01T00:00:00.000Z', id: 1, slug: 'chosen', deleted_at: '2020-01-01T00:00:00.000Z', whatever: 1 } });
    expect(post.status).toBe(201);
    expect(post.body).toMatchObject({ user_id: writer.id, published: false, published_at: null, deleted_at: null });
    expect(post.body.slug).not.toBe('chosen');
    expect(post.body.id).not.toBe(1);
    const c = await api.rest('POST', `/posts/${post.body.id}/comments`, { token: other.token, body: { body: 'c', post_id: 999, user_id: writer.id, id: 1 } });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({ post_id: post.body.id, user_id: other.id });
    const t = freshTenant();
    const tp = await api.rest('POST', '/tenant/posts', { headers: asTenant(t), body: { title: 'x', body: 'y', tenant_id: t + 1, id: 1 } });
    expect(tp.body.tenant_id).toBe(t);
    const pub = await api.rest('PATCH', `/posts/${post.body.id}/publish`, { token: writer.token, body: { published: false, user_id: other.id } });
    expect(pub.body).toMatchObject({ published: true, user_id: writer.id });
  });
  it('wrong JSON types → 422 with every problem listed, never 500', async () => {
    const r = await api.rest('POST', '/posts', { token: writer.token, body: { title: 5, body: ['x'] } });
    expect([r.status, r.body.message]).toEqual([422, 'Validation failed']);
    expect(r.body.errors.map((e: any) => e.field).sort()).toEqual(['body', 'title']);
    for (const raw of ['[]', '"text"', 'null', '42']) {
      const x = await api.rest('POST', '/posts', { token: writer.token, rawBody: raw });
      expect([raw, x.status, x.body.errors?.[0]?.field]).toEqual([raw, 422, null]);
    }
    const m = await api.rest('POST', '/posts', { token: writer.token, rawBody: '{"title":' });
    expect([m.status, m.body]).toEqual([400, { message: 'Malformed JSON' }]);
  });
});

describe('CONTRACT 5 and 8: check order and trash rules', () => {
  it('404 before 403 for a missing post; 403 for another author; moderator may', async () => {
    const r = await api.rest('PATCH', '/posts/2000000000/publish', { token: other.token });
    expect([r.status, r.body]).toEqual([404, { message: 'Post not found' }]);
    const p = await buildPost(app, { id: writer.id });
    for (const [m, path] of [['PATCH', `/posts/${p.id}/publish`], ['DELETE', `/posts/${p.id}`], ['PATCH', `/posts/${p.id}/restore`]]) {
      const f = await api.rest(m, path, { token: other.token });
      expect([path, f.status, f.body]).toEqual([path, 403, { message: 'Forbidden' }]);
    }
    expect((await api.rest('PATCH', `/posts/${p.id}/publish`, { token: mod.token })).status).toBe(200);
    expect((await api.rest('DELETE', `/posts/${p.id}`, { token: admin.token })).status).toBe(200);
    const again = await api.rest('DELETE', `/posts/${p.id}`, { token: writer.token });
    expect([again.status, again.body]).toEqual([404, { message: 'Post not found' }]);
    const comment = await api.rest('POST', `/posts/${p.id}/comments`, { token: writer.token, body: { body: '' } });
    expect([comment.status, comment.body]).toEqual([404, { message: 'Post not found' }]);
    const trashedDetail = await api.rest('GET', `/posts/${p.id}`);
    expect(trashedDetail.status).toBe(404);
  });
  it('DELETE /trash: 0 posts, 1 post, N posts', async () => {
    await api.rest('DELETE', '/trash', { token: mod.token });
    const zero = await api.rest('DELETE', '/trash', { token: admin.token });
    expect([zero.status, zero.body]).toEqual([200, { message: 'Permanently deleted 0 posts', count: 0 }]);
    await buildPost(app, { id: writer.id }, { deletedAt: new Date() });
    const one = await api.rest('DELETE', '/trash', { token: mod.token });
    expect(one.body).toEqual({ message: 'Permanently deleted 1 post', count: 1 });
    await buildPost(app, { id: writer.id }, { deletedAt: new Date() });
    await buildPost(app, { id: writer.id }, { deletedAt: new Date() });
    const two = await api.rest('DELETE', '/trash', { token: mod.token });
    expect(two.body).toEqual({ message: 'Permanently deleted 2 posts', count: 2 });
    const g = await api.gql('mutation { purgeTrash { message count } }', undefined, { token: mod.token });
    expect(g.data).toEqual({ purgeTrash: { message: 'Permanently deleted 0 posts', count: 0 } });
  });
});

describe('CONTRACT 12 and 13: GraphQL', () => {
  it('me is null when anonymous, the user otherwise, with posts', async () => {
    const anon = await api.gql('{ me { id } }');
    expect(anon).toMatchObject({ status: 200, data: { me: null } });
    expect(anon.errors).toBeUndefined();
    const me = await api.gql('{ me { id name email role emailVerifiedAt createdAt updatedAt posts { id } } }', undefined, { token: writer.token });
    expect(me.data.me).toMatchObject({ id: writer.id, role: 'user' });
    expect(Array.isArray(me.data.me.posts)).toBe(true);
    const bad = await api.gql('{ me { id } }', undefined, { token: 'garbage' });
    expect(bad.errors?.[0]).toMatchObject({ message: 'Invalid token', extensions: { code: 'UNAUTHENTICATED' } });
  });

  it('each operation answers its errors with the contract code', async () => {
    const p = await buildPost(app, { id: writer.id });
    const cases: [string, string | undefined, Record<string, unknown> | undefined, string, string][] = [
      ['mutation { createPost(title: "t", body: "b") { id } }', undefined, undefined, 'UNAUTHENTICATED', 'Unauthenticated'],
      ['mutation { createPost(title: " ", body: "b") { id } }', writer.token, undefined, 'BAD_USER_INPUT', 'Validation failed'],
      ['mutation($id: Int!) { publishPost(id: $id) { id } }', other.token, { id: p.id }, 'FORBIDDEN', 'Forbidden'],
      ['mutation($id: Int!) { deletePost(id: $id) { message } }', undefined, { id: p.id }, 'UNAUTHENTICATED', 'Unauthenticated'],
      ['mutation($id: Int!) { restorePost(id: $id) { id } }', other.token, { id: p.id }, 'FORBIDDEN', 'Forbidden'],
      ['mutation($id: Int!) { addComment(postId: $id, body: "") { id } }', other.token, { id: p.id }, 'BAD_USER_INPUT', 'Validation failed'],
      ['mutation($id: Int!) { addComment(postId: $id, body: "x") { id } }', undefined, { id: p.id }, 'UNAUTHENTICATED', 'Unauthenticated'],
      ['{ trash { total } }', writer.token, undefined, 'FORBIDDEN', 'Forbidden'],
      ['{ trashSimple { hasMore } }', undefined, undefined, 'UNAUTHENTICATED', 'Unauthenticated'],
      ['{ trashCursor { perPage } }', writer.token, undefined, 'FORBIDDEN', 'Forbidden'],
      ['mutation { purgeTrash { count } }', writer.token, undefined, 'FORBIDDEN', 'Forbidden'],
      ['mutation($id: Int!) { restoreFromTrash(id: $id) { id } }', mod.token, { id: p.id }, 'NOT_FOUND', 'Not in trash'],
      ['mutation($id: Int!) { deleteFromTrash(id: $id) { message } }', writer.token, { id: p.id }, 'FORBIDDEN', 'Forbidden'],
      ['{ adminUsers { total } }', mod.token, undefined, 'FORBIDDEN', 'Forbidden'],
      ['{ adminUsersSimple { hasMore } }', undefined, undefined, 'UNAUTHENTICATED', 'Unauthenticated'],
      ['mutation { deleteUser(id: 1) { message } }', mod.token, undefined, 'FORBIDDEN', 'Forbidden'],
      ['mutation { restoreUser(id: 2000000000) { id } }', admin.token, undefined, 'NOT_FOUND', 'User not found'],
      ['{ tenantPosts { id } }', undefined, undefined, 'UNAUTHENTICATED', 'Unknown tenant'],
      ['mutation { createTenantPost(title: "t", body: "b") { id } }', undefined, undefined, 'UNAUTHENTICATED', 'Unknown tenant'],
      ['{ allTenantPosts { id } }', writer.token, undefined, 'FORBIDDEN', 'Forbidden'],
      ['mutation { login(email: "nobody@example.test", password: "password123") { token } }', undefined, undefined, 'UNAUTHENTICATED', 'Invalid credentials'],
      ['mutation { register(name: "", email: "bad", password: "short") { token } }', undefined, undefined, 'BAD_USER_INPUT', 'Validation failed'],
      ['mutation { verifyEmail(token: "garbage") { message } }', undefined, undefined, 'BAD_USER_INPUT', 'Invalid or expired token'],
      ['mutation { resetPassword(token: "garbage", password: "password123") { message } }', undefined, undefined, 'BAD_USER_INPUT', 'Invalid or expired token'],
      ['mutation { resendVerification { message } }', undefined, undefined, 'UNAUTHENTICATED', 'Unauthenticated'],
      ['mutation { forgotPassword(email: "not-an-email") { message } }', undefined, undefined, 'BAD_USER_INPUT', 'Validation failed'],
    ];
    for (const [q, token, vars, code, message] of cases) {
      const g = await api.gql(q, vars, { token });
      expect([q, g.status, g.errors?.[0]?.message, g.errors?.[0]?.extensions?.code]).toEqual([q, 200, message, code]);
      if (code === 'BAD_USER_INPUT' && message === 'Validation failed') expect(g.errors?.[0]?.extensions?.errors?.length).toBeGreaterThan(0);
    }
  });

  it('Email already taken carries the field error on both surfaces', async () => {
    const email = uniqueEmail('taken');
    await api.rest('POST', '/auth/register', { body: { name: 'A', email, password: 'password123' } });
    const r = await api.rest('POST', '/auth/register', { body: { name: 'B', email: email.toUpperCase(), password: 'password123' } });
    expect([r.status, r.body]).toEqual([422, { message: 'Email already taken', errors: [{ field: 'email', message: 'Email already taken' }] }]);
    const g = await api.gql('mutation($e: String!) { register(name: "B", email: $e, password: "password123") { token } }', { e: email });
    expect(g.errors?.[0]).toMatchObject({ message: 'Email already taken', extensions: { code: 'BAD_USER_INPUT', errors: [{ field: 'email', message: 'Email already taken' }] } });
  });
});

describe('CONTRACT 7: precedence 404 → 405 → 413 → 400 → 401 → 404 → 403 → 422', () => {
  const big = JSON.stringify({ title: 't', body: 'x'.repeat(1_100_000) });
  it('each step wins over the ones after it', async () => {
    const cases: [string, string, string | undefined, string | undefined, number, string][] = [
      ['POST', '/nowhere', big, undefined, 404, 'Not found'],
      ['PUT', '/posts', big, undefined, 405, 'Method not allowed'],
      ['POST', '/posts', big, undefined, 413, 'Payload too large'],
      ['POST', '/posts/abc/comments', big, undefined, 413, 'Payload too large'],
      ['POST', '/posts', '{"title":', undefined, 400, 'Malformed JSON'],
      ['POST', '/posts/0/comments', '{"body":', writer.token, 400, 'Malformed JSON'],
      ['POST', '/posts/0/comments', '[]', undefined, 401, 'Unauthenticated'],
      ['POST', '/posts/0/comments', '[]', writer.token, 404, 'Post not found'],
      ['DELETE', '/trash/0', '{}', writer.token, 403, 'Forbidden'],
    ];
    for (const [method, path, rawBody, token, status, message] of cases) {
      const r = await api.rest(method, path, { rawBody, token });
      expect([method, path, r.status, r.body?.message]).toEqual([method, path, status, message]);
    }
  });
});

describe('CONTRACT 6: only HS256; the payload id must be a user id', () => {
  /**
   * The writer's real claims. With a stale token version every forged token below would be
   * refused for that reason alone, and the tests would prove nothing about algorithm or expiry.
   */
  async function writerClaims() {
    const [{ token_version: tv }] = await sql<{ token_version: number }>(app, 'select token_version from users where id = ?', [writer.id]);
    expect((jwt.decode(writer.token) as jwt.JwtPayload).tv).toBe(tv);
    return { id: writer.id, tv };
  }
  const me = async (token: string) => {
    const r = await api.rest('GET', '/auth/me', { token });
    return [r.status, r.status === 200 ? r.body.id : r.body];
  };

  it('HS384 / HS512 with the right secret, an expired token, or a non-integer id → 401; the same claims as HS256, unexpired → 200', async () => {
    const secret = app.config.jwtSecret!;
    const claims = await writerClaims();
    // Positive control: these claims, signed as the service signs, are accepted.
    expect(await me(jwt.sign(claims, secret, { algorithm: 'HS256', expiresIn: '7d' }))).toEqual([200, writer.id]);
    for (const algorithm of ['HS384', 'HS512'] as const) {
      const token = jwt.sign(claims, secret, { algorithm, expiresIn: '7d' });
      const r = await api.rest('GET', '/auth/me', { token });
      expect([algorithm, r.status, r.body]).toEqual([algorithm, 401, { message: 'Invalid token' }]);
      const g = await api.gql('{ me { id } }', undefined, { token });
      expect(g.errors?.[0]).toMatchObject({ message: 'Invalid token', extensions: { code: 'UNAUTHENTICATED' } });
    }
    for (const id of ['1', 1.5, -1, 0, null, 2 ** 40]) {
      const token = jwt.sign({ ...claims, id }, secret, { algorithm: 'HS256', expiresIn: '7d' });
      const r = await api.rest('GET', '/auth/me', { token });
      expect(r.status).toBe(401);
      expect(['Invalid token', 'User not found']).toContain(r.body.message);
    }
    const expired = jwt.sign({ ...claims, exp: Math.floor(Date.now() / 1000) - 10 }, secret, { algorithm: 'HS256' });
    expect(await me(expired)).toEqual([401, { message: 'Invalid token' }]);
  });

  it('an access token without exp → 401 Invalid token (access tokens last 7 days, not forever)', async () => {
    const secret = app.config.jwtSecret!;
    const claims = await writerClaims();
    expect(await me(jwt.sign(claims, secret, { algorithm: 'HS256', expiresIn: '7d' }))).toEqual([200, writer.id]);
    const forever = jwt.sign(claims, secret, { algorithm: 'HS256' });
    expect((jwt.decode(forever) as jwt.JwtPayload).exp).toBeUndefined();
    expect(await me(forever)).toEqual([401, { message: 'Invalid token' }]);
    const g = await api.gql('{ me { id } }', undefined, { token: forever });
    expect(g.errors?.[0]).toMatchObject({ message: 'Invalid token', extensions: { code: 'UNAUTHENTICATED' } });
  });
});

describe('one rule, one message: blog and tenant posts word title/body problems alike', () => {
  it('empty, too long and wrong types', async () => {
    const bodies = [{}, { title: ' ', body: '' }, { title: 't'.repeat(256), body: 'b'.repeat(100_001) }, { title: 5, body: ['x'] }];
    for (const body of bodies) {
      const blog = await api.rest('POST', '/posts', { token: writer.token, body });
      const tenant = await api.rest('POST', '/tenant/posts', { headers: asTenant(freshTenant()), body });
      expect(blog.status).toBe(422);
      expect(tenant.body).toEqual(blog.body);
    }
    const blog = await api.rest('POST', '/posts', { token: writer.token, body: {} });
    expect(blog.body.errors).toEqual([{ field: 'title', message: 'title is required' }, { field: 'body', message: 'body is required' }]);
  });
});

describe('CONTRACT 6: token kinds and lifetimes', () => {
  it('access: HS256, {id}, 7 days; verification: {id, purpose}, 24 h, mailed as a fragment; neither accepted in the other place', async () => {
    const email = uniqueEmail('tokens');
    const reg = await api.rest('POST', '/auth/register', { body: { name: 'Tok', email, password: 'password123' } });
    const access = jwt.decode(reg.body.token, { complete: true }) as jwt.Jwt & { payload: jwt.JwtPayload };
    expect(access.header.alg).toBe('HS256');
    expect(access.payload.id).toBe(reg.body.user.id);
    expect(access.payload.exp! - access.payload.iat!).toBe(7 * 24 * 3600);

    // Read from the delivered mail: the outbox keeps no copy of the token once it is sent.
    const [mail] = await mailbox.waitFor(email, 'Verify your email');
    const link = /http:\/\/app\.test\/verify-email#token=(\S+)/.exec(mail.text ?? '');
    expect(link).not.toBeNull();
    const verify = jwt.decode(link![1]) as jwt.JwtPayload;
    expect(verify).toMatchObject({ id: reg.body.user.id, purpose: 'verify-email' });
    expect(verify.exp! - verify.iat!).toBe(24 * 3600);

    expect((await api.rest('GET', '/auth/me', { token: link![1] })).body).toEqual({ message: 'Invalid token' });
    const wrong = await api.rest('POST', `/auth/verify-email/${reg.body.token}`);
    expect([wrong.status, wrong.body]).toEqual([400, { message: 'Invalid or expired token' }]);
    const g = await api.gql('mutation($t: String!) { verifyEmail(token: $t) { message } }', { t: reg.body.token });
    expect(g.errors?.[0]).toMatchObject({ message: 'Invalid or expired token', extensions: { code: 'BAD_USER_INPUT' } });
  });
});

describe('CONTRACT 7: a NUL character is an input problem (422 on its field), never a 500', () => {
  it('login email, on both surfaces; text fields of every write', async () => {
    const r = await api.rest('POST', '/auth/login', { body: { email: 'a\u0000b@example.test', password: 'password123' } });
    expect([r.status, r.body]).toEqual([422, { message: 'Validation failed', errors: [{ field: 'email', message: 'email must not contain NUL characters' }] }]);
    const g = await api.gql('mutation($e: String!) { login(email: $e, password: "password123") { token } }', { e: 'a\u0000b' });
    expect(g.errors?.[0]).toMatchObject({ message: 'Validation failed', extensions: { code: 'BAD_USER_INPUT', errors: [{ field: 'email', message: 'email must not contain NUL characters' }] } });
    const p = await buildPost(app, { id: writer.id });
    const writes: [string, string, object, Record<string, string>][] = [
      ['/auth/register', 'name', { name: 'a\u0000b', email: uniqueEmail('nul'), password: 'password123' }, {}],
      ['/posts', 'title', { title: 'a\u0000b', body: 'b' }, { authorization: `Bearer ${writer.token}` }],
      ['/posts', 'body', { title: 't', body: 'a\u0000b' }, { authorization: `Bearer ${writer.token}` }],
      [`/posts/${p.id}/comments`, 'body', { body: 'a\u0000b' }, { authorization: `Bearer ${writer.token}` }],
      ['/tenant/posts', 'title', { title: 'a\u0000b', body: 'b' }, asTenant(freshTenant())],
    ];
    for (const [path, field, body, headers] of writes) {
      const w = await api.rest('POST', path, { body, headers });
      expect([path, w.status, w.body]).toEqual([path, 422, { message: 'Validation failed', errors: [{ field, message: `${field} must not contain NUL characters` }] }]);
    }
  });
});

describe('CONTRACT 5: role-only lists answer 403 before reading their arguments', () => {
  it('REST and GraphQL, trash and admin users', async () => {
    for (const [path, token] of [['/trash?page=0', writer.token], ['/trash?paginate=cursor&cursor=garbage', writer.token], ['/admin/users?direction=up', mod.token], ['/admin/users?cursor=garbage', mod.token]]) {
      const r = await api.rest('GET', path, { token });
      expect([path, r.status, r.body]).toEqual([path, 403, { message: 'Forbidden' }]);
    }
    for (const [q, token] of [['{ trash(page: 0) { total } }', writer.token], ['{ trashCursor(cursor: "garbage") { perPage } }', writer.token], ['{ adminUsers(page: -1) { total } }', mod.token], ['{ adminUsersSimple(page: 0) { hasMore } }', writer.token]]) {
      const g = await api.gql(q, undefined, { token });
      expect([q, g.errors?.[0]?.message, g.errors?.[0]?.extensions?.code]).toEqual([q, 'Forbidden', 'FORBIDDEN']);
    }
  });
});
