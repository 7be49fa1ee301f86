import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { buildComment, buildPost } from './support/blog';
import { asTenant, freshTenant, seedTenantPosts } from './support/tenants';
import { readContextOf, requestFork } from '../src/core/context';
import { closeOrm, initOrm } from '../src/db/orm';
import { namedStatementText, runStatement, statementKey, type Statement } from '../src/db/statements';
import { buildHotReads } from '../src/modules/hot-reads';
import { commentsStatement } from '../src/modules/post/post.loaders';
import { postViewByIdStatement, postViewsPageStatement } from '../src/modules/post/post.queries';
import { postJsonStatement, postPageJsonStatement } from '../src/modules/post/post.rest';
import { actorStatement } from '../src/modules/user/user.queries';

/**
 * The hot reads run as statements prepared on every connection (db/statements.ts): the harness
 * starts the app as src/main.ts does (migrated first, then the ORM with the hot reads named
 * before its first connection). These tests fail the day a request's key stops matching what
 * the start-up built (the request would run its statement plain), the day MikroORM opens a
 * connection before `connect()` or stops calling the pool's `afterCreate` (an `execute` would
 * find no prepared statement), or the day a filter's value could end up in a named statement.
 */
let app: TestApp;
let api: ReturnType<typeof clients>;
let token: string;
let postId: number;

beforeAll(async () => {
  app = await startTestApp();
  api = clients(app.url);
  const author = await buildUser(app, { name: 'Named' });
  token = author.token;
  const commenter = (await buildUser(app, { name: 'Commenter' })).user;
  // 25 posts: pages 1 and 2 are full (their comments are one batch of 10 posts), page 3 has 5.
  for (let i = 0; i < 25; i++) {
    const post = await buildPost(app, author.user, { published: true, createdAt: new Date(Date.UTC(2026, 0, 1, 0, i)) });
    await buildComment(app, post, commenter, `comment on ${i}`);
    postId = post.id;
  }
});
afterAll(() => app.close());

/** What the requests of `run` sent: each statement as the log has it. */
async function sent(run: () => Promise<unknown>): Promise<string[]> {
  app.sent.length = 0;
  app.sql.length = 0;
  await run();
  return [...app.sent];
}

const POSTS_PAGE = `query($page: Int) { posts(page: $page) { total data { id title user { name } comments { body user { name } } } } }`;
const ONE_POST = `query($id: Int!) { post(id: $id) { id title comments { body user { name } } } }`;

describe('named statements', () => {
  it.each([
    ['REST GET /posts, first page', () => api.rest('GET', '/posts?page=1')],
    ['REST GET /posts, another page', () => api.rest('GET', '/posts?page=2')],
    ['REST GET /posts/:id', () => api.rest('GET', `/posts/${postId}`)],
    ['GraphQL posts(page: 1) with comments', () => api.gql(POSTS_PAGE, { page: 1 })],
    ['GraphQL posts(page: 2) with comments', () => api.gql(POSTS_PAGE, { page: 2 })],
    ['GraphQL post(id) with comments', () => api.gql(ONE_POST, { id: postId })],
  ])('%s: every statement is a named one', async (_label, run) => {
    let status = 0;
    const lines = await sent(async () => {
      const res = (await run()) as { status: number };
      status = res.status;
    });
    expect(status).toBe(200);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toMatch(/^\[query\] execute hot_\d+\(/);
  });

  it('a request with a bearer token: the token\'s user is read by a named statement', async () => {
    const lines = await sent(async () => expect((await api.gql('{ me { id name } }', undefined, { token })).data.me.name).toBe('Named'));
    expect(lines[0]).toMatch(/^\[query\] execute hot_\d+\(/);
  });

  it('a named statement answers exactly what the same statement sent plain answers', async () => {
    const em = app.orm.em;
    const ctx = readContextOf(em);
    const hot: [string, Statement][] = [
      ['REST page 1', await postPageJsonStatement(ctx, 'version')],
      ['REST page 1, counting', await postPageJsonStatement(ctx, 'count')],
      ['REST post', await postJsonStatement(em, postId)],
      ['GraphQL page 1', await postViewsPageStatement(ctx, 'version')],
      ['GraphQL page 1, counting', await postViewsPageStatement(ctx, 'count')],
      ['GraphQL post', await postViewByIdStatement(ctx, postId)],
      ['comments of one post', await commentsStatement(em, [postId])],
      ['actor', await actorStatement(em, 1)],
    ];
    for (const [label, statement] of hot) {
      expect([label, statement.named?.name]).toEqual([label, expect.stringMatching(/^hot_\d+$/)]);
      const plain = await runStatement(em, { sql: statement.sql, params: statement.params });
      expect(plain.length).toBeGreaterThan(0);
      expect([label, await runStatement(em, statement)]).toEqual([label, plain]);
    }
  });

  it('only the request\'s values are parameters of a named statement; the page size is a literal, for PostgreSQL\'s generic plan to see', async () => {
    const em = app.orm.em;
    const ctx = readContextOf(em);
    const page = await postPageJsonStatement(ctx, 'version');
    const post = await postJsonStatement(em, postId);
    // The page: its offset is $1 and nothing else is; the post: its id.
    expect(page.namedParams).toEqual([0]);
    expect(post.namedParams).toEqual([postId]);
    const pageText = namedStatementText(page.named!.name)!;
    expect(pageText).toMatch(/ limit 10 offset \$1\)/);
    expect(pageText.match(/\$\d+/g)).toEqual(['$1']);
    expect(namedStatementText(post.named!.name)!).toMatch(/ limit 1\)/);
  });

  it('a filter\'s value never reaches a named statement: tenant reads run plain, each with its own tenant', async () => {
    const [a, b] = [freshTenant(), freshTenant()];
    await seedTenantPosts(app, a, 2);
    await seedTenantPosts(app, b, 3);
    for (const [tenant, count] of [[a, 2], [b, 3], [a, 2]] as const) {
      let body: any;
      const lines = await sent(async () => (body = (await api.rest('GET', '/tenant/posts', { headers: asTenant(tenant) })).body));
      expect(body).toHaveLength(count);
      expect(body.every((p: { tenant_id: number }) => p.tenant_id === tenant)).toBe(true);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(line).not.toMatch(/execute hot_/);
    }
    // The key rule: a fork with a filter's parameter never shares the root's key, and no named text holds a tenant.
    const fork = requestFork(app.orm, a);
    expect(statementKey(fork, 'some shape')).not.toBe('some shape');
    expect((await postPageJsonStatement(readContextOf(fork), 'version')).named).toBeUndefined();
    for (let i = 1; namedStatementText(`hot_${i}`) !== undefined; i++) expect(namedStatementText(`hot_${i}`)).not.toMatch(/tenant/);
  });

  // Last: it retires a name for the rest of this file's process.
  it('a connection without the prepared statement: the plain statement answers, and the name is retired', async () => {
    const orm = await initOrm({ clientUrl: app.databaseUrl, poolMax: 1, named: buildHotReads });
    try {
      const em = orm.em.fork();
      const statement = await postJsonStatement(em, postId);
      expect(statement.named?.dropped).toBe(false);
      const before = await runStatement(em, statement);
      // The pool's only connection forgets every prepared statement.
      await em.execute('deallocate all');
      expect(await runStatement(em, statement)).toEqual(before);
      expect(statement.named?.dropped).toBe(true);
    } finally {
      await closeOrm(orm);
    }
  });
});

describe('naming at start-up', () => {
  it('a statement PostgreSQL cannot prepare runs plain; a statement run while naming fails the start', async () => {
    await jest.isolateModulesAsync(async () => {
      // A fresh copy of the modules: the set is named once per process.
      /* eslint-disable @typescript-eslint/no-require-imports -- a fresh copy of the modules comes from require inside isolateModules; a dynamic import() would not type-check under this tsconfig's module resolution */
      const statements = require('../src/db/statements') as typeof import('../src/db/statements');
      const orm = require('../src/db/orm') as typeof import('../src/db/orm');
      /* eslint-enable @typescript-eslint/no-require-imports */
      type Em = Parameters<typeof statements.cachedStatement>[0];
      const typed = (em: Em) => statements.cachedStatement(em, 'typed', [7], async () => ({ sql: 'select ?::int + 1 as x', params: [statements.param(0)] }));
      const untyped = (em: Em) => statements.cachedStatement(em, 'untyped', [7], async () => ({ sql: 'select ? is null as x', params: [statements.param(0)] }));
      const first = await orm.initOrm({ clientUrl: app.databaseUrl, poolMax: 1, named: async (em) => void (await typed(em), await untyped(em)) });
      try {
        const em = first.em.fork();
        const statement = await untyped(em);
        // `select $1 is null`: PostgreSQL cannot infer $1's type, so the first connection dropped it
        // and prepared the others one by one: they stay named and answer as such.
        expect(statement.named?.name).toBe('hot_2');
        expect(statement.named?.dropped).toBe(true);
        expect(await statements.runStatement(em, statement)).toEqual([{ x: false }]);
        const other = await typed(em);
        expect(other.named).toMatchObject({ name: 'hot_1', dropped: false });
        expect(await statements.runStatement(em, other)).toEqual([{ x: 8 }]);
        // Still named after its run: an execute that found no prepared statement would have retired it (26000).
        expect(other.named?.dropped).toBe(false);
      } finally {
        await orm.closeOrm(first);
      }
    });
    await jest.isolateModulesAsync(async () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- as above
      const orm = require('../src/db/orm') as typeof import('../src/db/orm');
      await expect(orm.initOrm({ clientUrl: app.databaseUrl, named: async (em) => void (await em.execute('select 1')) }))
        .rejects.toThrow('a statement ran while the hot statements were being named');
    });
  });
});
