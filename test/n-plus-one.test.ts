import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { buildComment, buildPost, POST_FIELDS } from './support/blog';

/**
 * A page of posts with every embed costs a FIXED number of statements on both surfaces, in every
 * format. GraphQL: 2 = the posts joined with their authors (with the total as a subquery in the
 * page format) + the comments joined with their authors. REST: 1, the same posts statement with
 * each post's comments (and their authors) as JSON built in it. A later cursor slice adds 1 (the
 * "anything before?" probe). The large page has 10 posts by 10 DIFFERENT authors, each with 10
 * comments by 10 different commenters, so an unbatched Post.user or Comment.user would show as
 * extra statements.
 */
const LIST_STATEMENTS = 2;
const REST_LIST_STATEMENTS = 1;
/** `me { posts { user comments { user } commentsCount } }`: the actor, their posts, the posts' authors, the comments with theirs. */
const ME_POSTS_STATEMENTS = 4;
/** `adminUsers { data { posts { user comments { user } commentsCount } } }`: the actor, the users with their total, then the three batches above. */
const USERS_WALK_STATEMENTS = 5;

let app: TestApp;
let api: ReturnType<typeof clients>;
let adminToken: string;
/** The author of the one-post page: no comments. */
let small: { id: number; token: string };
/** Ten authors of one published post each; every post has ten comments by ten commenters. */
let authors: { id: number; token: string }[];

beforeAll(async () => {
  app = await startTestApp();
  api = clients(app.url);
  // Ids in creation order: page 1 of adminUsers (20 by id) is the admin, the ten authors and nine
  // commenters; page 2 the last commenter, the small author and whoever the tests add later.
  adminToken = (await buildUser(app, { role: 'admin', name: 'Admin' })).token;
  const built = [];
  for (let i = 0; i < 10; i++) built.push(await buildUser(app, { name: `Author ${i}` }));
  const commenters = [];
  for (let i = 0; i < 10; i++) commenters.push((await buildUser(app, { name: `Commenter ${i}` })).user);
  const a = await buildUser(app, { name: 'Small' });
  small = { id: a.user.id, token: a.token };
  await buildPost(app, a.user);
  authors = built.map((b) => ({ id: b.user.id, token: b.token }));
  for (const b of built) {
    const p = await buildPost(app, b.user, { published: true });
    for (const c of commenters) await buildComment(app, p, c, `by ${c.name}`);
  }
});
afterAll(() => app.close());

async function statements(run: () => Promise<unknown>): Promise<string[]> {
  app.sql.length = 0;
  await run();
  return [...app.sql];
}

describe('no N+1', () => {
  it.each([
    ['page', '', REST_LIST_STATEMENTS],
    ['simple', '&paginate=simple', REST_LIST_STATEMENTS],
    ['cursor', '&paginate=cursor', REST_LIST_STATEMENTS],
  ])('REST GET /posts (%s): same fixed count for 1 post and for 10 posts x 10 comments', async (_f, q, expected) => {
    let body: any;
    const one = await statements(async () => (body = (await api.rest('GET', `/posts?author=${small.id}${q}`)).body));
    expect(body.data).toHaveLength(1);
    const ten = await statements(async () => (body = (await api.rest('GET', `/posts?published=1${q}`)).body));
    expect(body.data).toHaveLength(10);
    expect(body.data.every((p: any) => p.comments.length === 10 && p.comments.every((c: any) => c.user !== null) && p.user !== null)).toBe(true);
    expect(new Set(body.data.map((p: any) => p.user.id)).size).toBe(10);
    expect(new Set(body.data.flatMap((p: any) => p.comments.map((c: any) => c.user.id))).size).toBe(10);
    expect(one).toHaveLength(expected);
    expect(ten).toHaveLength(expected);
  });

  it('REST cursor: a later slice adds exactly one probe', async () => {
    const first = (await api.rest('GET', `/posts?published=1&paginate=cursor`)).body;
    expect(first.nextCursor).toBeNull();
    const { user } = await buildUser(app);
    for (let i = 0; i < 12; i++) await buildPost(app, user);
    const start = (await api.rest('GET', `/posts?author=${user.id}&paginate=cursor`)).body;
    const next = await statements(() => api.rest('GET', `/posts?author=${user.id}&paginate=cursor&cursor=${start.nextCursor}`));
    expect(next).toHaveLength(REST_LIST_STATEMENTS + 1);
  });

  it.each([
    ['posts', LIST_STATEMENTS],
    ['postsSimple', LIST_STATEMENTS],
    ['postsCursor', LIST_STATEMENTS],
  ])('GraphQL %s with every nested field: same fixed count for 1 and 10 posts', async (field, expected) => {
    const q = `query($a: Int, $p: Boolean) { ${field}(author: $a, published: $p) { data { ${POST_FIELDS} } } }`;
    let res: any;
    const one = await statements(async () => (res = await api.gql(q, { a: small.id })));
    expect(res.data[field].data).toHaveLength(1);
    const ten = await statements(async () => (res = await api.gql(q, { p: true })));
    expect(res.errors).toBeUndefined();
    const data = res.data[field].data;
    expect(data).toHaveLength(10);
    expect(new Set(data.map((p: any) => p.user.id)).size).toBe(10);
    expect(data.every((p: any) => p.commentsCount === 10 && p.comments.length === 10)).toBe(true);
    expect(new Set(data.flatMap((p: any) => p.comments.map((c: any) => c.user.id))).size).toBe(10);
    expect(one).toHaveLength(expected);
    expect(ten).toHaveLength(expected);
  });

  it('REST and GraphQL read the same slice under the same filters and author JOINs', async () => {
    const r = await statements(() => api.rest('GET', `/posts?published=1`));
    const g = await statements(() => api.gql(`query { posts(published: true) { total data { ${POST_FIELDS} } } }`));
    expect(r).toHaveLength(1);
    expect(g).toHaveLength(2);
    const [gPosts, gComments] = [g.find((l) => / from "posts" as "p"/.test(l))!, g.find((l) => / from "comments" as "c"/.test(l))!];
    // The posts' FROM, author JOIN and WHERE (the id slice with its filters) are the same text on both surfaces.
    const postsCore = / from "posts" as "p" .* order by "p"/.exec(gPosts)![0];
    expect(postsCore).toMatch(/"deleted_at" is null/);
    expect(r[0]).toContain(postsCore);
    // The comments' author is joined from the users under their filters, the same on both surfaces (REST names the alias "cu").
    const authorJoin = /left join \(select [^)]* from "users" as "vu" where [^)]*\) as "u" on u\.id = c\.user_id/.exec(gComments)![0];
    expect(authorJoin).toMatch(/"deleted_at" is null/);
    expect(r[0]).toContain(authorJoin.replace('as "u" on u.id', 'as "cu" on cu.id'));
  });

  it(`GraphQL me { posts { user comments { user } commentsCount } }: ${ME_POSTS_STATEMENTS} statements for a post without comments and for one with 10`, async () => {
    const q = `{ me { posts { id user { name } comments { user { name } } commentsCount } } }`;
    let res: any;
    const bare = await statements(async () => (res = await api.gql(q, undefined, { token: small.token })));
    expect(res.data.me.posts).toEqual([{ id: expect.any(Number), user: { name: 'Small' }, comments: [], commentsCount: 0 }]);
    const full = await statements(async () => (res = await api.gql(q, undefined, { token: authors[3].token })));
    expect(res.data.me.posts).toHaveLength(1);
    expect(res.data.me.posts[0]).toMatchObject({ user: { name: 'Author 3' }, commentsCount: 10 });
    expect(new Set(res.data.me.posts[0].comments.map((c: any) => c.user.name)).size).toBe(10);
    expect(bare).toHaveLength(ME_POSTS_STATEMENTS);
    expect(full).toHaveLength(ME_POSTS_STATEMENTS);
  });

  it(`GraphQL adminUsers → posts → user, comments { user }, commentsCount: ${USERS_WALK_STATEMENTS} statements for 1 user's post and for 10 users' posts with 100 comments`, async () => {
    // Within the cost limit (src/graphql/limits.ts): three nested lists leave room for few fields.
    const q = `query($page: Int) { adminUsers(page: $page) { data { id posts { user { id name } comments { user { name } } commentsCount } } } }`;
    let res: any;
    const many = await statements(async () => (res = await api.gql(q, { page: 1 }, { token: adminToken })));
    expect(res.errors).toBeUndefined();
    const users = res.data.adminUsers.data;
    expect(users).toHaveLength(20);
    const posts = users.flatMap((u: any) => u.posts);
    expect(posts).toHaveLength(10);
    expect(new Set(posts.map((p: any) => p.user.id)).size).toBe(10);
    expect(posts.every((p: any) => p.commentsCount === 10 && p.comments.length === 10)).toBe(true);
    expect(new Set(posts.flatMap((p: any) => p.comments.map((c: any) => c.user.name))).size).toBe(10);
    const few = await statements(async () => (res = await api.gql(q, { page: 2 }, { token: adminToken })));
    expect(res.errors).toBeUndefined();
    const smallUser = res.data.adminUsers.data.find((u: any) => u.id === small.id);
    expect(smallUser.posts).toEqual([{ user: { id: small.id, name: 'Small' }, comments: [], commentsCount: 0 }]);
    expect(many).toHaveLength(USERS_WALK_STATEMENTS);
    expect(few).toHaveLength(USERS_WALK_STATEMENTS);
  });
});
