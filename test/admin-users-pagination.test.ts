import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { sql } from './support/blog';
import { checkCursorFormat, checkOffsetFormats, sliceQuery, SLICE_FIELDS, type Slice, type SliceRequest, type WalkTarget } from './support/pagination-walk';

/**
 * CONTRACT 9 for GET /admin/users and adminUsers / adminUsersSimple / adminUsersCursor: users are
 * inserted and soft-deleted at random between requests; no row is skipped or repeated, page
 * numbers stay right. The list is every active user by id ascending, the admin included.
 */
let app: TestApp;
let api: ReturnType<typeof clients>;
let adminToken: string;
let adminId: number;

beforeAll(async () => {
  app = await startTestApp();
  api = clients(app.url);
  const admin = await buildUser(app, { role: 'admin' });
  adminToken = admin.token;
  adminId = admin.user.id;
});
afterAll(() => app.close());

async function restFetch(req: SliceRequest): Promise<Slice> {
  const r = await api.rest('GET', `/admin/users?${sliceQuery(req)}`, { token: adminToken });
  if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
  if (req.kind === 'cursor' && r.body.path !== '/admin/users') throw new Error(`path ${r.body.path}`);
  return r.body;
}

const GQL_FIELD = { page: 'adminUsers', simple: 'adminUsersSimple', cursor: 'adminUsersCursor' } as const;

async function gqlFetch(req: SliceRequest): Promise<Slice> {
  const field = GQL_FIELD[req.kind];
  const selection = SLICE_FIELDS[req.kind];
  const g =
    req.kind === 'cursor'
      ? await api.gql(`query($c: String, $d: Direction) { ${field}(cursor: $c, direction: $d) { ${selection} } }`, { c: req.cursor, d: req.direction.toUpperCase() }, { token: adminToken })
      : await api.gql(`query($p: Int) { ${field}(page: $p) { ${selection} } }`, { p: req.page }, { token: adminToken });
  if (g.errors) throw new Error(JSON.stringify(g.errors));
  return g.data[field];
}

let seq = 0;
const insertUser = async (deleted = false) =>
  (
    await sql(app, `insert into users (created_at, updated_at, name, email, password, role, deleted_at) values (now(), now(), 'Walker', ?, 'x', 'user', ?) returning id`, [
      `walk-${process.pid}-${++seq}@example.test`,
      deleted ? new Date() : null,
    ])
  )[0].id as number;

function usersTarget(fetch: (req: SliceRequest) => Promise<Slice>): WalkTarget {
  return {
    perPage: 20,
    fetch,
    async reset(count) {
      // Earlier runs' users are soft-deleted (out of the list); the admin stays and counts as a row.
      await sql(app, 'update users set deleted_at = now() where deleted_at is null and id <> ?', [adminId]);
      await sql(app, `insert into users (created_at, updated_at, name, email, password, role)
        select now(), now(), 'Walker', 'walk-' || gen_random_uuid() || '@example.test', 'x', 'user' from generate_series(1, ?) g`, [count]);
    },
    async currentIds() {
      return (await sql(app, 'select id from users where deleted_at is null order by id')).map((r) => r.id);
    },
    insert: () => insertUser(),
    async remove(id) {
      // Never the admin: the walk needs its token.
      if (id === adminId) return;
      await sql(app, 'update users set deleted_at = now() where id = ?', [id]);
    },
  };
}

describe('GET /admin/users walks (REST)', () => {
  const target = usersTarget(restFetch);
  it('page and simple: numbers and records right while users come and go', () => checkOffsetFormats(target, { maxRows: 75, numRuns: 15 }));
  it('cursor: forward and back, nothing skipped or repeated', () => checkCursorFormat(target, { maxRows: 75, numRuns: 15 }));
});

describe('GraphQL adminUsers / adminUsersSimple / adminUsersCursor walks', () => {
  const target = usersTarget(gqlFetch);
  it('page and simple', () => checkOffsetFormats(target, { maxRows: 75, numRuns: 15 }));
  it('cursor: forward and back', () => checkCursorFormat(target, { maxRows: 75, numRuns: 15 }));
});

describe('fixed examples', () => {
  it('soft-deleted users are out of the list and its total', async () => {
    await usersTarget(restFetch).reset(0);
    const hidden = await insertUser(true);
    const shown = await insertUser();
    const r = await api.rest('GET', '/admin/users', { token: adminToken });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ total: 2, perPage: 20, currentPage: 1, lastPage: 1, from: 1, to: 2, nextPage: null });
    expect(r.body.data.map((u: { id: number }) => u.id)).toEqual([adminId, shown]);
    expect(r.body.data.map((u: { id: number }) => u.id)).not.toContain(hidden);
    const past = await api.rest('GET', '/admin/users?page=3', { token: adminToken });
    expect([past.status, past.body]).toEqual([200, { data: [], total: 2, perPage: 20, currentPage: 3, lastPage: 1, from: null, to: null, nextPage: null }]);
  });

  it('cursor answers carry the request path on REST and /graphql on GraphQL', async () => {
    const r = await api.rest('GET', '/admin/users?paginate=cursor&direction=asc', { token: adminToken });
    expect(r.body).toMatchObject({ path: '/admin/users', perPage: 20, prevCursor: null, hasPrevPage: false });
    const g = await api.gql('{ adminUsersCursor { path perPage } }', undefined, { token: adminToken });
    expect(g.data).toEqual({ adminUsersCursor: { path: '/graphql', perPage: 20 } });
  });

  it('bad list parameters → 422 for the admin, 403 for anyone else first', async () => {
    const { token } = await buildUser(app);
    for (const q of ['paginate=pages', 'page=0', 'paginate=cursor&cursor=garbage', 'paginate=cursor&direction=up']) {
      const r = await api.rest('GET', `/admin/users?${q}`, { token: adminToken });
      expect([r.status, r.body.message]).toEqual([422, 'Validation failed']);
      const f = await api.rest('GET', `/admin/users?${q}`, { token });
      expect([f.status, f.body]).toEqual([403, { message: 'Forbidden' }]);
    }
    const g = await api.gql('{ adminUsersSimple(page: 0) { hasMore } }', undefined, { token: adminToken });
    expect(g.errors?.[0]).toMatchObject({ message: 'Validation failed', extensions: { code: 'BAD_USER_INPUT' } });
    const gf = await api.gql('{ adminUsersCursor(cursor: "garbage") { perPage } }', undefined, { token });
    expect(gf.errors?.[0]).toMatchObject({ message: 'Forbidden', extensions: { code: 'FORBIDDEN' } });
  });
});
