import { entityTag } from '../src/core/etag';
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { buildComment, buildPost, sql } from './support/blog';

/**
 * The edits (posts, comments, the caller's own user) and conditional writes on both surfaces:
 * every row of the edit table with its messages, the check order 401 → 404 → 403 → 412/428 → 422,
 * the role table, and races of writers holding one tag.
 */
let app: TestApp;
let api: ReturnType<typeof clients>;

beforeAll(async () => {
  app = await startTestApp();
  api = clients(app.url);
});
afterAll(() => app.close());

const POST = 'id title slug body etag';
const ifMatch = (tag: string) => ({ 'if-match': tag });
const STALE = '"not-the-current-tag"';

async function postTag(id: number): Promise<string> {
  const r = await api.rest('GET', `/posts/${id}`);
  expect(r.status).toBe(200);
  return r.headers.get('etag')!;
}

describe('PATCH /posts/:id and updatePost', () => {
  it('edits title and body, keeps the slug, answers the post with its ETag (the tag of its JSON, as every read of it)', async () => {
    const { user, token } = await buildUser(app);
    const post = await buildPost(app, user, { title: 'First title', published: true });
    const before = await postTag(post.id);
    const r = await api.rest('PATCH', `/posts/${post.id}`, { token, body: { title: 'Second title', slug: 'ignored', user_id: 999 }, headers: ifMatch(before) });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: post.id, title: 'Second title', slug: post.slug, body: post.body, user_id: user.id });
    expect(r.headers.get('etag')).toBe(entityTag(r.text));
    expect(r.headers.get('cache-control')).toBe('no-store');
    // The public read's tag changes at once, and is the write's tag; a signed-in read and GraphQL agree.
    const anon = await api.rest('GET', `/posts/${post.id}`, { headers: { 'if-none-match': before } });
    expect(anon.status).toBe(200);
    expect(anon.headers.get('etag')).toBe(r.headers.get('etag'));
    expect((await api.rest('GET', `/posts/${post.id}`, { token })).headers.get('etag')).toBe(r.headers.get('etag'));
    const g = await api.gql(`{ post(id: ${post.id}) { etag } }`);
    expect(g.data.post.etag).toBe(r.headers.get('etag'));

    const m = await api.gql(`mutation($id: Int!, $m: String) { updatePost(id: $id, body: "New body", ifMatch: $m) { ${POST} } }`, { id: post.id, m: r.headers.get('etag') }, { token });
    expect(m.errors).toBeUndefined();
    expect(m.data.updatePost).toMatchObject({ title: 'Second title', slug: post.slug, body: 'New body' });
    expect(m.data.updatePost.etag).toBe(await postTag(post.id));
  });

  it('401, 404 (missing, malformed, trashed), 403, then 412, then 422, on both surfaces', async () => {
    const { user, token } = await buildUser(app);
    const other = await buildUser(app);
    const post = await buildPost(app, user);
    const trashed = await buildPost(app, user, { deletedAt: new Date() });

    const cases: [string, number | string, Record<string, string>, unknown, number, string][] = [
      ['', post.id, ifMatch(STALE), {}, 401, 'Unauthenticated'],
      [token, 999999, ifMatch(STALE), {}, 404, 'Post not found'],
      [token, 'abc', ifMatch(STALE), {}, 404, 'Post not found'],
      [token, trashed.id, ifMatch(STALE), {}, 404, 'Post not found'],
      [other.token, post.id, ifMatch(STALE), {}, 403, 'Forbidden'],
      [token, post.id, ifMatch(STALE), {}, 412, 'Precondition failed'],
    ];
    for (const [t, id, headers, body, status, message] of cases) {
      const r = await api.rest('PATCH', `/posts/${id}`, { token: t || undefined, headers, body });
      expect({ status: r.status, body: r.body }).toEqual({ status, body: { message } });
    }
    const current = await postTag(post.id);
    const stale = await api.rest('PATCH', `/posts/${post.id}`, { token, headers: ifMatch(STALE), body: {} });
    expect(stale.headers.get('etag')).toBe(current);

    const invalid = await api.rest('PATCH', `/posts/${post.id}`, { token, headers: ifMatch(current), body: {} });
    expect(invalid.status).toBe(422);
    expect(invalid.body).toEqual({ message: 'Validation failed', errors: [{ field: null, message: 'title or body is required' }] });
    const tooLong = await api.rest('PATCH', `/posts/${post.id}`, { token, body: { title: 'x'.repeat(256), body: '' } });
    expect(tooLong.body.errors).toEqual([
      { field: 'title', message: 'title must be at most 255 characters' },
      { field: 'body', message: 'body is required' },
    ]);

    const gq = (id: number, t?: string, m?: string) =>
      api.gql(`mutation($id: Int!, $m: String) { updatePost(id: $id, title: "T", ifMatch: $m) { id } }`, { id, m }, { token: t });
    expect((await gq(post.id)).errors?.[0]).toMatchObject({ message: 'Unauthenticated', extensions: { code: 'UNAUTHENTICATED' } });
    expect((await gq(trashed.id, token, STALE)).errors?.[0]).toMatchObject({ message: 'Post not found', extensions: { code: 'NOT_FOUND' } });
    expect((await gq(post.id, other.token, STALE)).errors?.[0]).toMatchObject({ message: 'Forbidden', extensions: { code: 'FORBIDDEN' } });
    expect((await gq(post.id, token, STALE)).errors?.[0]).toEqual(expect.objectContaining({ message: 'Precondition failed', extensions: { code: 'PRECONDITION_FAILED', etag: current } }));
    const none = await api.gql(`mutation { updatePost(id: ${post.id}) { id } }`, undefined, { token });
    expect(none.errors?.[0]).toMatchObject({ message: 'Validation failed', extensions: { code: 'BAD_USER_INPUT', errors: [{ field: null, message: 'title or body is required' }] } });
    // Nothing was written by any of these.
    expect(await postTag(post.id)).toBe(current);
  });

  it('If-Match: `*`, a list holding the current tag, and never a weak tag', async () => {
    const { user, token } = await buildUser(app);
    const post = await buildPost(app, user);
    expect((await api.rest('PATCH', `/posts/${post.id}`, { token, headers: ifMatch('*'), body: { title: 'A' } })).status).toBe(200);
    const tag = await postTag(post.id);
    expect((await api.rest('PATCH', `/posts/${post.id}`, { token, headers: ifMatch(`W/${tag}`), body: { title: 'B' } })).status).toBe(412);
    expect((await api.rest('PATCH', `/posts/${post.id}`, { token, headers: ifMatch(`"x", ${tag}`), body: { title: 'B' } })).status).toBe(200);
    // Without If-Match (REQUIRE_IF_MATCH off) the write is unconditional.
    expect((await api.rest('PATCH', `/posts/${post.id}`, { token, body: { title: 'C' } })).status).toBe(200);
  });

  it('the role table: a moderator and an admin may edit others\' posts', async () => {
    const { user } = await buildUser(app);
    const post = await buildPost(app, user);
    for (const role of ['moderator', 'admin'] as const) {
      const { token } = await buildUser(app, { role });
      const r = await api.rest('PATCH', `/posts/${post.id}`, { token, body: { body: `by ${role}` } });
      expect({ status: r.status, body: r.body.body }).toEqual({ status: 200, body: `by ${role}` });
    }
  });

  it('publish, trash and restore honour If-Match on both surfaces', async () => {
    const { user, token } = await buildUser(app);
    const post = await buildPost(app, user);
    let tag = await postTag(post.id);
    expect((await api.rest('PATCH', `/posts/${post.id}/publish`, { token, headers: ifMatch(STALE) })).status).toBe(412);
    const pub = await api.rest('PATCH', `/posts/${post.id}/publish`, { token, headers: ifMatch(tag) });
    expect(pub.status).toBe(200);
    expect(pub.headers.get('etag')).toBe(entityTag(pub.text));
    tag = pub.headers.get('etag')!;
    const g = await api.gql(`mutation($m: String) { deletePost(id: ${post.id}, ifMatch: $m) { message } }`, { m: STALE }, { token });
    expect(g.errors?.[0].extensions).toEqual({ code: 'PRECONDITION_FAILED', etag: tag });
    expect((await api.rest('DELETE', `/posts/${post.id}`, { token, headers: ifMatch(tag) })).body).toEqual({ message: 'Post deleted' });
    // The trashed post's tag: its JSON now, as the trash lists it.
    const [row] = (await api.rest('GET', '/trash', { token: (await buildUser(app, { role: 'admin' })).token })).body.data.filter((p: { id: number }) => p.id === post.id);
    const trashedTag = entityTag(JSON.stringify(row));
    expect((await api.rest('PATCH', `/posts/${post.id}/restore`, { token, headers: ifMatch(tag) })).status).toBe(412);
    const restored = await api.gql(`mutation($m: String) { restorePost(id: ${post.id}, ifMatch: $m) { id deletedAt etag } }`, { m: trashedTag }, { token });
    expect(restored.errors).toBeUndefined();
    expect(restored.data.restorePost.etag).toBe(await postTag(post.id));
  });
});

describe('PATCH/DELETE /comments/:id, updateComment and deleteComment', () => {
  it('the comment\'s author edits it; the post\'s author may not edit, but may delete; moderators and admins may both', async () => {
    const author = await buildUser(app);
    const commenter = await buildUser(app);
    const stranger = await buildUser(app);
    const post = await buildPost(app, author.user, { published: true });
    const comment = await buildComment(app, post, commenter.user, 'Hi');

    const edit = (token: string, body: string, headers?: Record<string, string>) => api.rest('PATCH', `/comments/${comment.id}`, { token, body: { body }, headers });
    expect((await edit(stranger.token, 'x')).body).toEqual({ message: 'Forbidden' });
    expect((await edit(author.token, 'x')).body).toEqual({ message: 'Forbidden' });
    const ok = await edit(commenter.token, 'Hi, edited');
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ id: comment.id, post_id: post.id, user_id: commenter.user.id, body: 'Hi, edited', user: { id: commenter.user.id } });
    expect(ok.headers.get('etag')).toBe(entityTag(ok.text));
    const g = await api.gql(`{ post(id: ${post.id}) { etag comments { id body etag } } }`);
    expect(g.data.post.comments).toEqual([{ id: comment.id, body: 'Hi, edited', etag: ok.headers.get('etag') }]);
    // A post's JSON embeds its comments: its tag changed with the comment.
    expect(g.data.post.etag).toBe(await postTag(post.id));

    for (const role of ['moderator', 'admin'] as const) {
      const { token } = await buildUser(app, { role });
      const m = await api.gql(`mutation { updateComment(id: ${comment.id}, body: "by ${role}") { body etag } }`, undefined, { token });
      expect(m.data.updateComment.body).toBe(`by ${role}`);
    }

    expect((await api.rest('DELETE', `/comments/${comment.id}`, { token: stranger.token })).status).toBe(403);
    expect((await api.rest('DELETE', `/comments/${comment.id}`, { token: author.token, headers: ifMatch(STALE) })).status).toBe(412);
    const del = await api.rest('DELETE', `/comments/${comment.id}`, { token: author.token });
    expect({ status: del.status, body: del.body }).toEqual({ status: 200, body: { message: 'Comment deleted' } });
    expect(await sql(app, 'select id from comments where id = ?', [comment.id])).toEqual([]);
    expect((await api.rest('DELETE', `/comments/${comment.id}`, { token: author.token })).body).toEqual({ message: 'Comment not found' });

    for (const who of [commenter, await buildUser(app, { role: 'moderator' })]) {
      const c = await buildComment(app, post, commenter.user);
      const m = await api.gql(`mutation { deleteComment(id: ${c.id}) { message } }`, undefined, { token: who.token });
      expect(m.data.deleteComment).toEqual({ message: 'Comment deleted' });
    }
    const c = await buildComment(app, post, commenter.user);
    const denied = await api.gql(`mutation { deleteComment(id: ${c.id}) { message } }`, undefined, { token: stranger.token });
    expect(denied.errors?.[0]).toMatchObject({ message: 'Forbidden', extensions: { code: 'FORBIDDEN' } });
  });

  it('401, 404 (missing, malformed, on a trashed post), 403, 412, 422 in that order, on both surfaces', async () => {
    const { user, token } = await buildUser(app);
    const other = await buildUser(app);
    const post = await buildPost(app, user);
    const comment = await buildComment(app, post, user);
    const trashedPost = await buildPost(app, user, { deletedAt: new Date() });
    const hidden = await buildComment(app, trashedPost, user);

    const cases: [string | undefined, number | string, number, string][] = [
      [undefined, comment.id, 401, 'Unauthenticated'],
      [token, 999999, 404, 'Comment not found'],
      [token, '0', 404, 'Comment not found'],
      [token, hidden.id, 404, 'Comment not found'],
      [other.token, comment.id, 403, 'Forbidden'],
      [token, comment.id, 412, 'Precondition failed'],
    ];
    for (const [t, id, status, message] of cases) {
      for (const method of ['PATCH', 'DELETE']) {
        const r = await api.rest(method, `/comments/${id}`, { token: t, headers: ifMatch(STALE), body: method === 'PATCH' ? { body: '' } : undefined });
        expect({ method, status: r.status, body: r.body }).toEqual({ method, status, body: { message } });
      }
      if (typeof id === 'number') {
        const g = await api.gql(`mutation($id: Int!) { updateComment(id: $id, body: "", ifMatch: "${STALE.replace(/"/g, '\\"')}") { id } }`, { id }, { token: t });
        expect(g.errors?.[0].message).toBe(message);
      }
    }
    const r = await api.rest('PATCH', `/comments/${comment.id}`, { token, headers: ifMatch('*'), body: { body: ' ' } });
    expect(r.body).toEqual({ message: 'Validation failed', errors: [{ field: 'body', message: 'body is required' }] });
    expect((await sql(app, 'select body from comments where id = ?', [comment.id]))[0].body).toBe('A comment');
  });
});

describe('PATCH /auth/me and updateMe', () => {
  it('renames the caller; 401, 412, 422; the answer and GET /auth/me carry the same tag', async () => {
    const { user, token } = await buildUser(app, { name: 'Old' });
    expect((await api.rest('PATCH', '/auth/me', { body: { name: 'x' } })).body).toEqual({ message: 'Unauthenticated' });
    const me = await api.rest('GET', '/auth/me', { token });
    const tag = me.headers.get('etag')!;
    expect(tag).toBe(entityTag(me.text));
    expect((await api.rest('PATCH', '/auth/me', { token, headers: ifMatch(STALE), body: { name: '' } })).status).toBe(412);
    const bad = await api.rest('PATCH', '/auth/me', { token, headers: ifMatch(tag), body: { name: ' ' } });
    expect(bad.body).toEqual({ message: 'Validation failed', errors: [{ field: 'name', message: 'name is required' }] });
    const r = await api.rest('PATCH', '/auth/me', { token, headers: ifMatch(tag), body: { name: '  New  ', role: 'admin', email: 'x@y.z' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: user.id, name: 'New', role: 'user', email: user.email });
    expect(r.headers.get('etag')).toBe(entityTag(r.text));
    expect((await api.rest('GET', '/auth/me', { token })).headers.get('etag')).toBe(r.headers.get('etag'));

    const g = await api.gql(`mutation($m: String) { updateMe(name: "Gql", ifMatch: $m) { name etag } }`, { m: tag }, { token });
    expect(g.errors?.[0]).toMatchObject({ message: 'Precondition failed', extensions: { code: 'PRECONDITION_FAILED', etag: r.headers.get('etag') } });
    const ok = await api.gql(`mutation($m: String) { updateMe(name: "Gql", ifMatch: $m) { name etag } }`, { m: r.headers.get('etag') }, { token });
    expect(ok.data.updateMe.name).toBe('Gql');
    const meTag = (await api.rest('GET', '/auth/me', { token })).headers.get('etag');
    expect(ok.data.updateMe.etag).toBe(meTag);
    expect((await api.gql('{ me { etag } }', undefined, { token })).data.me.etag).toBe(meTag);
    const anon = await api.gql('mutation { updateMe(name: "x") { id } }');
    expect(anon.errors?.[0]).toMatchObject({ message: 'Unauthenticated', extensions: { code: 'UNAUTHENTICATED' } });
  });
});

describe('POST /auth/change-password and changePassword', () => {
  it('changes the password, revokes every older token and answers a fresh one', async () => {
    const { user, token } = await buildUser(app);
    const second = app.built.services.tokens.signAccess(user);
    const r = await api.rest('POST', '/auth/change-password', { token, body: { current_password: 'password123', password: 'a new passphrase' } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ message: 'Password changed', token: expect.any(String) });
    for (const old of [token, second]) expect((await api.rest('GET', '/auth/me', { token: old })).body).toEqual({ message: 'Invalid token' });
    expect((await api.rest('GET', '/auth/me', { token: r.body.token })).status).toBe(200);
    expect((await api.rest('POST', '/auth/login', { body: { email: user.email, password: 'password123' } })).status).toBe(401);
    expect((await api.rest('POST', '/auth/login', { body: { email: user.email, password: 'a new passphrase' } })).status).toBe(200);

    const g = await api.gql(`mutation { changePassword(currentPassword: "a new passphrase", password: "third passphrase") { token user { id etag } } }`, undefined, { token: r.body.token });
    expect(g.errors).toBeUndefined();
    expect(g.data.changePassword.user.id).toBe(user.id);
    expect((await api.rest('GET', '/auth/me', { token: r.body.token })).body).toEqual({ message: 'Invalid token' });
    const me = await api.rest('GET', '/auth/me', { token: g.data.changePassword.token });
    expect(me.headers.get('etag')).toBe(g.data.changePassword.user.etag);
  });

  it('401, 412, 422 (input), 422 `Current password is incorrect`; nothing written on failure', async () => {
    const { user, token } = await buildUser(app);
    expect((await api.rest('POST', '/auth/change-password', { body: {} })).body).toEqual({ message: 'Unauthenticated' });
    expect((await api.rest('POST', '/auth/change-password', { token, headers: ifMatch(STALE), body: {} })).body).toEqual({ message: 'Precondition failed' });
    const bad = await api.rest('POST', '/auth/change-password', { token, body: { current_password: '', password: 'short' } });
    expect(bad.body).toEqual({
      message: 'Validation failed',
      errors: [
        { field: 'current_password', message: 'current_password is required' },
        { field: 'password', message: 'password must be at least 8 bytes' },
      ],
    });
    const wrong = await api.rest('POST', '/auth/change-password', { token, body: { current_password: 'wrong password', password: 'a new passphrase' } });
    expect({ status: wrong.status, body: wrong.body }).toEqual({
      status: 422,
      body: { message: 'Current password is incorrect', errors: [{ field: 'current_password', message: 'Current password is incorrect' }] },
    });
    const g = await api.gql(`mutation { changePassword(currentPassword: "wrong password", password: "a new passphrase") { token } }`, undefined, { token });
    expect(g.errors?.[0]).toMatchObject({ message: 'Current password is incorrect', extensions: { code: 'BAD_USER_INPUT', errors: [{ field: 'current_password', message: 'Current password is incorrect' }] } });
    // The old token still works: nothing changed.
    expect((await api.rest('GET', '/auth/me', { token })).status).toBe(200);
    expect((await api.rest('POST', '/auth/login', { body: { email: user.email, password: 'password123' } })).status).toBe(200);
  });

  it('a wrong current password counts against the login throttle of that email and IP', async () => {
    const { user, token } = await buildUser(app);
    for (let i = 0; i < 5; i++) expect((await api.rest('POST', '/auth/login', { body: { email: user.email, password: 'nope' } })).status).toBe(401);
    for (let i = 0; i < 5; i++) expect((await api.rest('POST', '/auth/change-password', { token, body: { current_password: 'nope', password: 'a new passphrase' } })).status).toBe(422);
    // Ten failures: both routes now answer 429, even with the right password.
    const login = await api.rest('POST', '/auth/login', { body: { email: user.email, password: 'password123' } });
    expect({ status: login.status, body: login.body }).toEqual({ status: 429, body: { message: 'Too many requests' } });
    const change = await api.rest('POST', '/auth/change-password', { token, body: { current_password: 'password123', password: 'a new passphrase' } });
    expect(change.status).toBe(429);
    expect(Number(change.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('DELETE /admin/users/:id and deleteUser with If-Match', () => {
  it('412 with the user\'s current tag, 200 with it', async () => {
    const admin = await buildUser(app, { role: 'admin' });
    const target = await buildUser(app);
    const tag = (await api.rest('GET', '/auth/me', { token: target.token })).headers.get('etag')!;
    const stale = await api.rest('DELETE', `/admin/users/${target.user.id}`, { token: admin.token, headers: ifMatch(STALE) });
    expect({ status: stale.status, body: stale.body, etag: stale.headers.get('etag') }).toEqual({ status: 412, body: { message: 'Precondition failed' }, etag: tag });
    const g = await api.gql(`{ adminUsersCursor(direction: DESC) { data { id etag } } }`, undefined, { token: admin.token });
    expect(g.data.adminUsersCursor.data.find((u: { id: number }) => u.id === target.user.id).etag).toBe(tag);
    const m = await api.gql(`mutation($m: String) { deleteUser(id: ${target.user.id}, ifMatch: $m) { message } }`, { m: tag }, { token: admin.token });
    expect(m.data.deleteUser).toEqual({ message: 'User deleted' });
    expect((await api.rest('DELETE', `/admin/users/${target.user.id}`, { token: admin.token, headers: ifMatch('*') })).body).toEqual({ message: 'User not found' });
  });
});

describe('races: writers holding one tag', () => {
  const outcome = (statuses: number[]) => statuses.slice().sort();

  it.each([2, 3, 5])('%i edits of one post at once: exactly one 200, the rest 412', async (n) => {
    const { user, token } = await buildUser(app);
    const post = await buildPost(app, user);
    const tag = await postTag(post.id);
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        i % 2
          ? api.gql(`mutation($m: String) { updatePost(id: ${post.id}, title: "gql ${i}", ifMatch: $m) { id } }`, { m: tag }, { token }).then((g) => (g.errors ? 412 : 200))
          : api.rest('PATCH', `/posts/${post.id}`, { token, headers: ifMatch(tag), body: { title: `rest ${i}` } }).then((r) => r.status),
      ),
    );
    expect(outcome(answers)).toEqual([200, ...Array(n - 1).fill(412)]);
  });

  it('4 edits of one comment at once, 3 renames of one user at once: one 200 each, the rest 412', async () => {
    const { user, token } = await buildUser(app);
    const post = await buildPost(app, user);
    const comment = await buildComment(app, post, user);
    const commentTag = entityTag(JSON.stringify((await api.rest('GET', `/posts/${post.id}`)).body.comments[0]));
    const comments = await Promise.all(Array.from({ length: 4 }, (_, i) => api.rest('PATCH', `/comments/${comment.id}`, { token, headers: ifMatch(commentTag), body: { body: `v${i}` } })));
    expect(outcome(comments.map((r) => r.status))).toEqual([200, 412, 412, 412]);
    const userTag = (await api.rest('GET', '/auth/me', { token })).headers.get('etag')!;
    const renames = await Promise.all(Array.from({ length: 3 }, (_, i) => api.rest('PATCH', '/auth/me', { token, headers: ifMatch(userTag), body: { name: `n${i}` } })));
    expect(outcome(renames.map((r) => r.status))).toEqual([200, 412, 412]);
    // Each 412 carries the tag the winner left.
    const winner = renames.find((r) => r.status === 200)!;
    for (const r of renames.filter((x) => x.status === 412)) expect(r.headers.get('etag')).toBe(winner.headers.get('etag'));
  });

  it('a comment delete and a comment edit holding one tag: one wins', async () => {
    const { user, token } = await buildUser(app);
    const post = await buildPost(app, user);
    const comment = await buildComment(app, post, user);
    const tag = entityTag(JSON.stringify((await api.rest('GET', `/posts/${post.id}`)).body.comments[0]));
    const [edit, del] = await Promise.all([
      api.rest('PATCH', `/comments/${comment.id}`, { token, headers: ifMatch(tag), body: { body: 'edited' } }),
      api.rest('DELETE', `/comments/${comment.id}`, { token, headers: ifMatch(tag) }),
    ]);
    // The delete wins (the edit then finds no comment: 404), or the edit wins (the delete's tag is stale: 412).
    expect([JSON.stringify([200, 412]), JSON.stringify([404, 200])]).toContain(JSON.stringify([edit.status, del.status]));
  });
});

describe('GraphQL etag is batched', () => {
  it('a page of posts with comments costs one statement more for all their tags, not one per post', async () => {
    const { user } = await buildUser(app);
    for (let i = 0; i < 5; i++) await buildComment(app, await buildPost(app, user, { published: true }), user);
    const count = async (fields: string) => {
      app.sql.length = 0;
      const g = await api.gql(`{ posts(author: ${user.id}) { data { id ${fields} comments { id ${fields} } } } }`);
      expect(g.errors).toBeUndefined();
      return { n: app.sql.length, data: g.data.posts.data };
    };
    const plain = await count('');
    const tagged = await count('etag');
    expect(tagged.n).toBe(plain.n + 2);
    for (const p of tagged.data) expect(p.etag).toBe(await postTag(p.id));
  });
});

describe('REQUIRE_IF_MATCH=true', () => {
  let strict: TestApp;
  let sapi: ReturnType<typeof clients>;
  beforeAll(async () => {
    strict = await startTestApp({ REQUIRE_IF_MATCH: 'true' });
    sapi = clients(strict.url);
  });
  afterAll(() => strict.close());

  it('a write without If-Match is 428 after 401/404/403 and before 422; with one it runs', async () => {
    const { user, token } = await buildUser(strict);
    const other = await buildUser(strict);
    const post = await buildPost(strict, user);
    expect((await sapi.rest('PATCH', `/posts/${post.id}`, { body: {} })).status).toBe(401);
    expect((await sapi.rest('PATCH', '/posts/999999', { token, body: {} })).status).toBe(404);
    expect((await sapi.rest('PATCH', `/posts/${post.id}`, { token: other.token, body: {} })).status).toBe(403);
    const r = await sapi.rest('PATCH', `/posts/${post.id}`, { token, body: {} });
    expect({ status: r.status, body: r.body }).toEqual({ status: 428, body: { message: 'Precondition required' } });
    for (const [method, path] of [['PATCH', `/posts/${post.id}/publish`], ['DELETE', `/posts/${post.id}`], ['PATCH', `/posts/${post.id}/restore`], ['PATCH', '/auth/me'], ['POST', '/auth/change-password']]) {
      expect({ path, status: (await sapi.rest(method, path, { token, body: method === 'DELETE' ? undefined : {} })).status }).toEqual({ path, status: 428 });
    }
    const g = await sapi.gql(`mutation { updatePost(id: ${post.id}, title: "x") { id } }`, undefined, { token });
    expect(g.errors?.[0]).toMatchObject({ message: 'Precondition required', extensions: { code: 'PRECONDITION_REQUIRED' } });
    expect((await sapi.rest('PATCH', `/posts/${post.id}`, { token, headers: ifMatch('*'), body: {} })).status).toBe(422);
    expect((await sapi.rest('PATCH', `/posts/${post.id}`, { token, headers: ifMatch('*'), body: { title: 'ok' } })).status).toBe(200);
    // Creates are not writes to an existing resource.
    expect((await sapi.rest('POST', '/posts', { token, body: { title: 'new', body: 'b' } })).status).toBe(201);
  });
});
