import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { sql } from './support/blog';
import { checkCursorFormat, checkOffsetFormats, sliceQuery, SLICE_FIELDS, type Slice, type SliceRequest, type WalkTarget } from './support/pagination-walk';

let app: TestApp;
let api: ReturnType<typeof clients>;
let modToken: string;
let writerId: number;

beforeAll(async () => {
  app = await startTestApp();
  api = clients(app.url);
  modToken = (await buildUser(app, { role: 'moderator' })).token;
  writerId = (await buildUser(app)).user.id;
});
afterAll(() => app.close());

async function restFetch(path: string, req: SliceRequest, token?: string): Promise<Slice> {
  const r = await api.rest('GET', `${path}${path.includes('?') ? '&' : '?'}${sliceQuery(req)}`, { token });
  if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
  return r.body;
}

async function gqlFetch(names: { page: string; simple: string; cursor: string }, req: SliceRequest, extra: Record<string, unknown>, token?: string): Promise<Slice> {
  const field = names[req.kind];
  const vars: Record<string, unknown> = { ...extra };
  if (req.kind === 'cursor') {
    vars.cursor = req.cursor;
    vars.direction = req.direction.toUpperCase();
  } else vars.page = req.page;
  const decl = Object.keys(vars).map((k) => `$${k}: ${k === 'cursor' ? 'String' : k === 'direction' ? 'Direction' : 'Int'}`).join(', ');
  const args = Object.keys(vars).map((k) => `${k}: $${k}`).join(', ');
  const g = await api.gql(`query(${decl}) { ${field}(${args}) { ${SLICE_FIELDS[req.kind]} } }`, vars, { token });
  if (g.errors) throw new Error(JSON.stringify(g.errors));
  return g.data[field];
}

/** GET /posts narrowed to one fresh author per run, so runs do not see each other's rows. */
function postsTarget(fetch: (req: SliceRequest, author: number) => Promise<Slice>): WalkTarget {
  let author = 0;
  return {
    perPage: 10,
    fetch: (req) => fetch(req, author),
    async reset(count) {
      author = (await buildUser(app)).user.id;
      // created_at repeats every third row, so ties are broken by id
      await sql(app, `insert into posts (created_at, updated_at, user_id, title, slug, body)
        select now() - (g % 3) * interval '1 hour', now(), ?, 't', 'walk-' || gen_random_uuid(), 'b' from generate_series(1, ?) g`, [author, count]);
    },
    async currentIds() {
      return (await sql(app, 'select id from posts where user_id = ? and deleted_at is null order by created_at desc, id desc', [author])).map((r) => r.id);
    },
    async insert() {
      const [r] = await sql(app, `insert into posts (created_at, updated_at, user_id, title, slug, body) values (now(), now(), ?, 't', 'walk-' || gen_random_uuid(), 'b') returning id`, [author]);
      return r.id;
    },
    async remove(id) {
      await sql(app, 'update posts set deleted_at = now() where id = ?', [id]);
    },
  };
}

/** GET /trash: the whole trash, emptied at the start of each run; removal restores or destroys. */
function trashTarget(fetch: (req: SliceRequest) => Promise<Slice>): WalkTarget {
  let flip = false;
  return {
    perPage: 20,
    fetch,
    async reset(count) {
      await sql(app, 'delete from posts where deleted_at is not null');
      await sql(app, `insert into posts (created_at, updated_at, user_id, title, slug, body, deleted_at)
        select now(), now(), ?, 't', 'walk-' || gen_random_uuid(), 'b', now() - (g % 4) * interval '1 day' from generate_series(1, ?) g`, [writerId, count]);
    },
    async currentIds() {
      return (await sql(app, 'select id from posts where deleted_at is not null order by deleted_at desc, id desc')).map((r) => r.id);
    },
    async insert() {
      const [r] = await sql(app, `insert into posts (created_at, updated_at, user_id, title, slug, body, deleted_at) values (now(), now(), ?, 't', 'walk-' || gen_random_uuid(), 'b', now()) returning id`, [writerId]);
      return r.id;
    },
    async remove(id) {
      flip = !flip;
      await sql(app, flip ? 'update posts set deleted_at = null where id = ?' : 'delete from posts where id = ?', [id]);
    },
  };
}

const POSTS_GQL = { page: 'posts', simple: 'postsSimple', cursor: 'postsCursor' };
const TRASH_GQL = { page: 'trash', simple: 'trashSimple', cursor: 'trashCursor' };

describe('GET /posts walks (REST)', () => {
  const target = postsTarget((req, author) => restFetch(`/posts?author=${author}`, req));
  it('page and simple: numbers and records right while rows come and go', () => checkOffsetFormats(target, { maxRows: 45, numRuns: 20 }));
  it('cursor: forward and back, nothing skipped or repeated', () => checkCursorFormat(target, { maxRows: 45, numRuns: 20 }));
});

describe('GET /trash walks (REST)', () => {
  const target = trashTarget((req) => restFetch('/trash', req, modToken));
  it('page and simple', () => checkOffsetFormats(target, { maxRows: 70, numRuns: 15 }));
  it('cursor: forward and back', () => checkCursorFormat(target, { maxRows: 70, numRuns: 15 }));
});

describe('GraphQL posts / postsSimple / postsCursor walks', () => {
  const target = postsTarget((req, author) => gqlFetch(POSTS_GQL, req, { author }));
  it('page and simple', () => checkOffsetFormats(target, { maxRows: 45, numRuns: 15 }));
  it('cursor: forward and back', () => checkCursorFormat(target, { maxRows: 45, numRuns: 15 }));
});

describe('GraphQL trash / trashSimple / trashCursor walks', () => {
  const target = trashTarget((req) => gqlFetch(TRASH_GQL, req, {}, modToken));
  it('page and simple', () => checkOffsetFormats(target, { maxRows: 70, numRuns: 15 }));
  it('cursor: forward and back', () => checkCursorFormat(target, { maxRows: 70, numRuns: 15 }));
});

describe('fixed examples', () => {
  it('empty list: lastPage 1, from/to null, nextPage null; a page past the end is 200 with empty data', async () => {
    const { user } = await buildUser(app);
    const r = await api.rest('GET', `/posts?author=${user.id}&page=5`);
    expect([r.status, r.body]).toEqual([200, { data: [], total: 0, perPage: 10, currentPage: 5, lastPage: 1, from: null, to: null, nextPage: null }]);
    const s = await api.rest('GET', `/posts?author=${user.id}&paginate=simple&page=9`);
    expect(s.body).toEqual({ data: [], hasMore: false });
    const c = await api.rest('GET', `/posts?author=${user.id}&paginate=cursor`);
    expect(c.body).toEqual({ data: [], nextCursor: null, prevCursor: null, hasNextPage: false, hasPrevPage: false, perPage: 10, path: '/posts' });
    const g = await api.gql(`query($a: Int) { postsCursor(author: $a) { path perPage } posts(author: $a, page: 2) { lastPage from to nextPage data { id } } }`, { a: user.id });
    expect(g.data).toEqual({ postsCursor: { path: '/graphql', perPage: 10 }, posts: { lastPage: 1, from: null, to: null, nextPage: null, data: [] } });
  });

  it('21 posts: page 3 holds one, page 4 is empty', async () => {
    const target = postsTarget(() => Promise.reject(new Error('unused')));
    await target.reset(21);
    const ids = await target.currentIds();
    const author = (await sql(app, 'select user_id from posts where id = ?', [ids[0]]))[0].user_id;
    const p3 = await api.rest('GET', `/posts?author=${author}&page=3`);
    expect(p3.body).toMatchObject({ total: 21, lastPage: 3, from: 21, to: 21, nextPage: null, currentPage: 3 });
    expect(p3.body.data.map((p: { id: number }) => p.id)).toEqual([ids[20]]);
    const p1 = await api.rest('GET', `/posts?author=${author}`);
    expect(p1.body).toMatchObject({ from: 1, to: 10, nextPage: 2 });
  });
});

describe('invalid list parameters → 422', () => {
  const bad = ['paginate=pages', 'page=0', 'page=-1', 'page=abc', 'page=1.5', 'page=99999999999', 'paginate=cursor&cursor=garbage', 'paginate=cursor&cursor=eyJpZCI6MX0', 'paginate=cursor&direction=sideways', 'direction=up', 'page=1&page=2', 'cursor=garbage', 'paginate=simple&cursor=eyJpZCI6MX0'];
  it.each(bad)('GET /posts?%s', async (q) => {
    const r = await api.rest('GET', `/posts?${q}`);
    expect(r.status).toBe(422);
    expect(r.body.message).toBe('Validation failed');
    expect(r.body.errors.length).toBeGreaterThan(0);
  });
  it.each(bad)('GET /trash?%s (moderator)', async (q) => {
    const r = await api.rest('GET', `/trash?${q}`, { token: modToken });
    expect(r.status).toBe(422);
    expect(r.body.message).toBe('Validation failed');
  });
  it('every problem is listed at once: a bad page or cursor beside bad filters (REST and GraphQL)', async () => {
    const r = await api.rest('GET', '/posts?page=0&author=abc&published=maybe');
    expect([r.status, r.body.message]).toEqual([422, 'Validation failed']);
    expect(r.body.errors).toEqual(expect.arrayContaining([
      { field: 'page', message: 'page must be a positive integer' },
      { field: 'author', message: 'author must be a positive integer' },
      { field: 'published', message: 'published must be one of true, 1, yes, on, false, 0, no, off' },
    ]));
    expect(r.body.errors).toHaveLength(3);
    const c = await api.rest('GET', '/posts?paginate=cursor&cursor=garbage&author=0');
    expect(c.body.errors).toEqual([
      { field: 'author', message: 'author must be a positive integer' },
      { field: 'cursor', message: 'cursor is not a cursor this list returned' },
    ]);
    const g = await api.gql('{ posts(page: 0, author: -1) { total } }');
    expect(g.errors?.[0]).toMatchObject({ message: 'Validation failed', extensions: { code: 'BAD_USER_INPUT' } });
    expect(g.errors?.[0].extensions?.errors).toEqual([
      { field: 'author', message: 'author must be a positive integer' },
      { field: 'page', message: 'page must be a positive integer' },
    ]);
  });
  it('GraphQL: bad page and cursor are 422-coded with field errors; a bad direction is refused by the schema', async () => {
    for (const q of ['{ posts(page: 0) { total } }', '{ postsSimple(page: -3) { hasMore } }', '{ postsCursor(cursor: "garbage") { perPage } }']) {
      const g = await api.gql(q);
      expect(g.errors?.[0]).toMatchObject({ message: 'Validation failed', extensions: { code: 'BAD_USER_INPUT' } });
    }
    const t = await api.gql('{ trash(page: 0) { total } }', undefined, { token: modToken });
    expect(t.errors?.[0]).toMatchObject({ message: 'Validation failed', extensions: { code: 'BAD_USER_INPUT', errors: [{ field: 'page', message: 'page must be a positive integer' }] } });
    const d = await api.gql('query($d: Direction) { postsCursor(direction: $d) { perPage } }', { d: 'SIDEWAYS' });
    expect(d.data).toBeUndefined();
    expect(d.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
  });
});
