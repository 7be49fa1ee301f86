import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { startMailbox, type Mailbox } from './support/mailbox';
import { outboxCount, USER_SHAPE } from './support/accounts';

let app: TestApp;
let mailbox: Mailbox;
let api: ReturnType<typeof clients>;
let admin: Awaited<ReturnType<typeof buildUser>>;
let plain: Awaited<ReturnType<typeof buildUser>>;
let moderator: Awaited<ReturnType<typeof buildUser>>;

const ids: number[] = [];

beforeAll(async () => {
  mailbox = await startMailbox();
  app = await startTestApp({ SMTP_URL: mailbox.url });
  api = clients(app.url);
  admin = await buildUser(app, { role: 'admin', name: 'Admin' });
  plain = await buildUser(app);
  moderator = await buildUser(app, { role: 'moderator' });
  ids.push(admin.user.id, plain.user.id, moderator.user.id);
  // 25 users in all: two pages of 20.
  for (let i = 0; i < 22; i++) ids.push((await buildUser(app, { name: `U${i}` })).user.id);
});
afterAll(async () => {
  await app.close();
  await mailbox.close();
});

const PAGE = `query($page: Int) { adminUsers(page: $page) { total perPage currentPage lastPage from to nextPage data { id email role } } }`;

describe('GET /admin/users and query adminUsers', () => {
  it('401 without a token; 403 Forbidden for user and moderator, before the query is even read', async () => {
    const anon = await api.rest('GET', '/admin/users');
    expect(anon.status).toBe(401);
    expect(anon.body).toEqual({ message: 'Unauthenticated' });
    for (const { token } of [plain, moderator]) {
      for (const path of ['/admin/users', '/admin/users?paginate=bogus']) {
        const res = await api.rest('GET', path, { token });
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ message: 'Forbidden' });
      }
      expect((await api.gql(PAGE, {}, { token })).errors?.[0]).toMatchObject({ message: 'Forbidden', extensions: { code: 'FORBIDDEN' } });
      expect((await api.gql('{ adminUsersCursor(cursor: "zz") { perPage } }', {}, { token })).errors?.[0]).toMatchObject({ message: 'Forbidden' });
    }
  });

  it('page format: 20 a page, id ascending, users without password', async () => {
    const res = await api.rest('GET', '/admin/users', { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ total: 25, perPage: 20, currentPage: 1, lastPage: 2, from: 1, to: 20, nextPage: 2 });
    expect(res.body.data.map((u: { id: number }) => u.id)).toEqual(ids.slice(0, 20));
    expect(res.body.data[0]).toEqual({ ...USER_SHAPE, id: admin.user.id, name: 'Admin', email: admin.user.email, role: 'admin' });
    expect(res.text).not.toContain('password');

    const two = await api.rest('GET', '/admin/users?page=2', { token: admin.token });
    expect(two.body).toMatchObject({ total: 25, currentPage: 2, lastPage: 2, from: 21, to: 25, nextPage: null });
    expect(two.body.data.map((u: { id: number }) => u.id)).toEqual(ids.slice(20));
    const past = await api.rest('GET', '/admin/users?page=9', { token: admin.token });
    expect(past.body).toMatchObject({ data: [], from: null, to: null, nextPage: null });

    const g = await api.gql(PAGE, { page: 2 }, { token: admin.token });
    expect(g.data.adminUsers).toMatchObject({ total: 25, perPage: 20, currentPage: 2, lastPage: 2, from: 21, to: 25, nextPage: null });
    expect(g.data.adminUsers.data.map((u: { id: number }) => u.id)).toEqual(ids.slice(20));
  });

  it('simple and cursor formats on both surfaces; bad values → 422', async () => {
    const simple = await api.rest('GET', '/admin/users?paginate=simple&page=1', { token: admin.token });
    expect(simple.status).toBe(200);
    expect(simple.body.hasMore).toBe(true);
    expect(simple.body.data).toHaveLength(20);
    const gs = await api.gql('{ adminUsersSimple(page: 2) { hasMore data { id } } }', {}, { token: admin.token });
    expect(gs.data.adminUsersSimple).toEqual({ hasMore: false, data: ids.slice(20).map((id) => ({ id })) });

    const first = await api.rest('GET', '/admin/users?paginate=cursor&direction=asc', { token: admin.token });
    expect(first.body).toMatchObject({ hasNextPage: true, hasPrevPage: false, prevCursor: null, perPage: 20, path: '/admin/users' });
    expect(first.body.data.map((u: { id: number }) => u.id)).toEqual(ids.slice(0, 20));
    const next = await api.rest('GET', `/admin/users?paginate=cursor&direction=asc&cursor=${first.body.nextCursor}`, { token: admin.token });
    expect(next.body.data.map((u: { id: number }) => u.id)).toEqual(ids.slice(20));
    expect(next.body).toMatchObject({ hasNextPage: false, hasPrevPage: true, nextCursor: null });

    const gc = await api.gql(
      'query($c: String) { adminUsersCursor(cursor: $c, direction: DESC) { data { id } nextCursor hasNextPage } }',
      { c: null },
      { token: admin.token },
    );
    expect(gc.data.adminUsersCursor.data.map((u: { id: number }) => u.id)).toEqual([...ids].reverse().slice(0, 20));
    expect(gc.data.adminUsersCursor.hasNextPage).toBe(true);

    const bad = await api.rest('GET', '/admin/users?paginate=bogus', { token: admin.token });
    expect(bad.status).toBe(422);
    expect(bad.body.message).toBe('Validation failed');
    expect((await api.rest('GET', '/admin/users?page=0', { token: admin.token })).status).toBe(422);
    expect((await api.rest('GET', '/admin/users?paginate=cursor&cursor=nope', { token: admin.token })).status).toBe(422);
  });
});

describe('DELETE /admin/users/:id and PATCH /admin/users/:id/restore', () => {
  it('non-admins get 403 before any lookup (even for ids that do not exist); anonymous 401', async () => {
    for (const [method, path] of [['DELETE', '/admin/users/999999'], ['PATCH', '/admin/users/999999/restore'], ['DELETE', `/admin/users/${plain.user.id}`]] as const) {
      expect((await api.rest(method, path)).status).toBe(401);
      const res = await api.rest(method, path, { token: moderator.token });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ message: 'Forbidden' });
    }
    expect((await api.gql('mutation { deleteUser(id: 999999) { message } }', {}, { token: plain.token })).errors?.[0]).toMatchObject({ message: 'Forbidden', extensions: { code: 'FORBIDDEN' } });
  });

  it('unknown or malformed ids → 404 User not found', async () => {
    for (const path of ['/admin/users/999999', '/admin/users/abc', '/admin/users/0', '/admin/users/99999999999']) {
      const res = await api.rest('DELETE', path, { token: admin.token });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: 'User not found' });
    }
    const restore = await api.rest('PATCH', '/admin/users/999999/restore', { token: admin.token });
    expect(restore.status).toBe(404);
    expect(restore.body).toEqual({ message: 'User not found' });
    expect((await api.gql('mutation { restoreUser(id: -1) { id } }', {}, { token: admin.token })).errors?.[0]).toMatchObject({ message: 'User not found', extensions: { code: 'NOT_FOUND' } });
  });

  it('a soft-deleted user cannot log in, their token gets 401 User not found, forgot-password is silent, their email stays taken; restore brings them back', async () => {
    const victim = await buildUser(app, { name: 'Victim' });
    const res = await api.rest('DELETE', `/admin/users/${victim.user.id}`, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'User deleted' });
    expect((await api.rest('DELETE', `/admin/users/${victim.user.id}`, { token: admin.token })).status).toBe(404);

    const login = await api.rest('POST', '/auth/login', { body: { email: victim.user.email, password: victim.password } });
    expect(login.status).toBe(401);
    expect(login.body).toEqual({ message: 'Invalid credentials' });
    const me = await api.rest('GET', '/auth/me', { token: victim.token });
    expect(me.status).toBe(401);
    expect(me.body).toEqual({ message: 'User not found' });
    const forgot = await api.rest('POST', '/auth/forgot-password', { body: { email: victim.user.email } });
    expect(forgot.body).toEqual({ message: 'If that email exists, a link was sent.' });
    expect(await outboxCount(app, victim.user.email)).toBe(0);
    const again = await api.rest('POST', '/auth/register', { body: { name: 'Copy', email: victim.user.email, password: 'password123' } });
    expect(again.status).toBe(422);
    expect(again.body).toEqual({ message: 'Email already taken', errors: [{ field: 'email', message: 'Email already taken' }] });
    const list = await api.rest('GET', '/admin/users?page=2', { token: admin.token });
    expect(list.body.data.map((u: { id: number }) => u.id)).not.toContain(victim.user.id);

    const restored = await api.rest('PATCH', `/admin/users/${victim.user.id}/restore`, { token: admin.token });
    expect(restored.status).toBe(200);
    expect(restored.body).toEqual({ ...USER_SHAPE, id: victim.user.id, name: 'Victim', email: victim.user.email, role: 'user' });
    expect((await api.rest('GET', '/auth/me', { token: victim.token })).status).toBe(200);
    expect((await api.rest('POST', '/auth/login', { body: { email: victim.user.email, password: victim.password } })).status).toBe(200);
    // Restoring an active user returns it unchanged.
    expect((await api.rest('PATCH', `/admin/users/${victim.user.id}/restore`, { token: admin.token })).body).toEqual(restored.body);
  });

  it('GraphQL deleteUser and restoreUser', async () => {
    const victim = await buildUser(app, { name: 'G' });
    const del = await api.gql('mutation($id: Int!) { deleteUser(id: $id) { message } }', { id: victim.user.id }, { token: admin.token });
    expect(del.data).toEqual({ deleteUser: { message: 'User deleted' } });
    const gone = await api.gql('{ me { id } }', undefined, { token: victim.token });
    expect(gone.errors?.[0]).toMatchObject({ message: 'User not found', extensions: { code: 'UNAUTHENTICATED' } });
    const back = await api.gql('mutation($id: Int!) { restoreUser(id: $id) { id name email role emailVerifiedAt } }', { id: victim.user.id }, { token: admin.token });
    expect(back.data).toEqual({ restoreUser: { id: victim.user.id, name: 'G', email: victim.user.email, role: 'user', emailVerifiedAt: null } });
  });
});
