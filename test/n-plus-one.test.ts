import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { buildComment, buildPost, POST_FIELDS } from './support/blog';

/**
 * A page of posts with every embed costs a FIXED number of statements on both surfaces, in every
 * format: 2 = the posts joined with their authors (with the total as a subquery in the page
 * format) + the comments joined with their authors. A later cursor slice adds 1 (the "anything
 * before?" probe).
 */
const LIST_STATEMENTS = 2;

let app: TestApp;
let api: ReturnType<typeof clients>;
let small: number;
let large: number;

beforeAll(async () => {
  app = await startTestApp();
  api = clients(app.url);
  const { user: a } = await buildUser(app);
  await buildPost(app, a);
  small = a.id;
  const { user: b } = await buildUser(app);
  const commenters = await Promise.all(Array.from({ length: 10 }, () => buildUser(app)));
  for (let i = 0; i < 10; i++) {
    const p = await buildPost(app, b);
    for (let j = 0; j < 10; j++) await buildComment(app, p, commenters[j].user, `c${j}`);
  }
  large = b.id;
});
afterAll(() => app.close());

async function statements(run: () => Promise<unknown>): Promise<string[]> {
  app.sql.length = 0;
  await run();
  return [...app.sql];
}

describe('no N+1', () => {
  it.each([
    ['page', '', LIST_STATEMENTS],
    ['simple', '&paginate=simple', LIST_STATEMENTS],
    ['cursor', '&paginate=cursor', LIST_STATEMENTS],
  ])('REST GET /posts (%s): same fixed count for 1 post and for 10 posts x 10 comments', async (_f, q, expected) => {
    let body: any;
    const one = await statements(async () => (body = (await api.rest('GET', `/posts?author=${small}${q}`)).body));
    expect(body.data).toHaveLength(1);
    const ten = await statements(async () => (body = (await api.rest('GET', `/posts?author=${large}${q}`)).body));
    expect(body.data).toHaveLength(10);
    expect(body.data.every((p: any) => p.comments.length === 10 && p.comments.every((c: any) => c.user !== null) && p.user !== null)).toBe(true);
    expect(one).toHaveLength(expected);
    expect(ten).toHaveLength(expected);
  });

  it('REST cursor: a later slice adds exactly one probe', async () => {
    const first = (await api.rest('GET', `/posts?author=${large}&paginate=cursor`)).body;
    expect(first.nextCursor).toBeNull();
    const { user } = await buildUser(app);
    for (let i = 0; i < 12; i++) await buildPost(app, user);
    const start = (await api.rest('GET', `/posts?author=${user.id}&paginate=cursor`)).body;
    const next = await statements(() => api.rest('GET', `/posts?author=${user.id}&paginate=cursor&cursor=${start.nextCursor}`));
    expect(next).toHaveLength(LIST_STATEMENTS + 1);
  });

  it.each([
    ['posts', LIST_STATEMENTS],
    ['postsSimple', LIST_STATEMENTS],
    ['postsCursor', LIST_STATEMENTS],
  ])('GraphQL %s with every nested field: same fixed count for 1 and 10 posts', async (field, expected) => {
    const q = `query($a: Int) { ${field}(author: $a) { data { ${POST_FIELDS} } } }`;
    let res: any;
    const one = await statements(async () => (res = await api.gql(q, { a: small })));
    expect(res.data[field].data).toHaveLength(1);
    const ten = await statements(async () => (res = await api.gql(q, { a: large })));
    expect(res.errors).toBeUndefined();
    expect(res.data[field].data).toHaveLength(10);
    expect(res.data[field].data[0].comments).toHaveLength(10);
    expect(one).toHaveLength(expected);
    expect(ten).toHaveLength(expected);
  });

  it('REST and GraphQL issue the same statements for the same page', async () => {
    const strip = (lines: string[]) => lines.map((l) => l.replace(/\[took \d+ ms.*$/, '').replace(/\s+/g, ' ').trim()).sort();
    const r = await statements(() => api.rest('GET', `/posts?author=${large}`));
    const g = await statements(() => api.gql(`query($a: Int) { posts(author: $a) { total data { ${POST_FIELDS} } } }`, { a: large }));
    expect(strip(g)).toEqual(strip(r));
  });

  it('GraphQL users with their posts: one statement for all users\' posts', async () => {
    const { token } = await buildUser(app);
    const q = `{ me { posts { id user { name } comments { user { name } } commentsCount } } }`;
    const lines = await statements(() => api.gql(q, undefined, { token }));
    // the actor, then the (empty) posts batch
    expect(lines).toHaveLength(2);
  });
});
