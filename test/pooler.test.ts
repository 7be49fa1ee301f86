import { Client } from 'pg';
import { compiledStatementNames } from '../src/db/statements';
import { namedStatementsOf } from '../src/db/named-statements';
import { createTestDatabase, startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { buildComment, buildPost } from './support/blog';
import { asTenant, freshTenant, seedTenantPosts } from './support/tenants';
import { describeWithPooler, startPgBouncer, type Pooler } from './support/pgbouncer';

/**
 * The service behind a transaction-mode pooler (CONTRACT 21), Debian's PgBouncer with two server
 * connections, against the same service on a direct connection to the same database: DATABASE_URL
 * the pooler, DATABASE_DIRECT_URL the server. (`npm run test:pooler` runs the REST, GraphQL,
 * idempotency, subscription and outbox suites through such a pooler as a whole.)
 */
describeWithPooler('test/pooler.test.ts', 'behind PgBouncer in transaction mode', () => {
  let pooler: Pooler;
  let direct: TestApp;
  let pooled: TestApp;
  let token: string;
  let postId: number;
  let tenant: number;

  beforeAll(async () => {
    // Direct even under `npm run test:pooler` (a DATABASE_URL of its own).
    direct = await startTestApp({ DATABASE_URL: await createTestDatabase() });
    pooler = await startPgBouncer(direct.databaseUrl);
    pooled = await startTestApp({ DATABASE_URL: pooler.pooled(direct.databaseUrl), DATABASE_DIRECT_URL: direct.databaseUrl });
    const { user, token: t } = await buildUser(direct);
    token = t;
    const post = await buildPost(direct, user, { published: true });
    postId = post.id;
    await buildComment(direct, post, user, 'First');
    await buildPost(direct, user);
    tenant = freshTenant();
    await seedTenantPosts(direct, tenant, 2);
  });
  afterAll(async () => {
    await pooled?.close();
    await pooler?.stop();
    await direct?.close();
  });

  /** The reads both instances answer, each as its answer's status and body. */
  const reads = async (app: TestApp) => {
    const api = clients(app.url);
    const answers = await Promise.all([
      api.rest('GET', '/posts'),
      api.rest('GET', '/posts?page=2'),
      api.rest('GET', '/posts?published=true'),
      api.rest('GET', `/posts/${postId}`),
      api.rest('GET', '/auth/me', { token }),
      api.rest('GET', '/tenant/posts', { headers: asTenant(tenant) }),
      api.gql(`{ posts(page: 1) { total data { id title user { name } comments { body user { name } } commentsCount } } post(id: ${postId}) { id title etag } }`),
    ]);
    return answers.map((a) => ('body' in a ? { status: a.status, body: a.body } : { status: a.status, data: a.data, errors: a.errors }));
  };

  it('answers as on a direct connection, though another client PREPAREd every name the service uses on every server connection', async () => {
    const expected = await reads(direct);
    expect(expected.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200, 200]);
    // The names this build runs its statements under (a direct instance runs them named).
    const names = compiledStatementNames();
    expect(names.length).toBeGreaterThan(4);
    expect(namedStatementsOf(direct.orm)).toBeDefined();
    // Both server connections at once (two open transactions), a foreign statement under each name.
    const foreign = [new Client({ connectionString: pooler.pooled(direct.databaseUrl) }), new Client({ connectionString: pooler.pooled(direct.databaseUrl) })];
    for (const c of foreign) await c.connect();
    try {
      await Promise.all(foreign.map((c) => c.query('begin')));
      const backends = await Promise.all(foreign.map(async (c) => (await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0].pid));
      expect(new Set(backends).size).toBe(2);
      for (const c of foreign) for (const name of names) await c.query(`prepare ${name} as select 'foreign' as id, 'foreign' as json, 'foreign' as title`);
      await Promise.all(foreign.map((c) => c.query('commit')));
    } finally {
      await Promise.all(foreign.map((c) => c.end()));
    }
    // Behind the pooler, named statements are off (DATABASE_PREPARED_STATEMENTS=auto).
    expect(namedStatementsOf(pooled.orm)).toBeUndefined();
    for (let round = 0; round < 3; round++) expect(await reads(pooled)).toEqual(expected);
  });

  it('the statement timeout is in force though no startup parameter carries it: the role\'s default in the database', async () => {
    const [row] = await pooled.orm.em.fork().execute<{ t: string }[]>(`select current_setting('statement_timeout') as t`);
    expect(row.t).toBe('30s');
    // Why: the pooler refuses it as a startup parameter.
    const refused = new Client({ connectionString: pooler.pooled(direct.databaseUrl), statement_timeout: 1000 });
    await expect(refused.connect()).rejects.toThrow(/unsupported startup parameter: statement_timeout/);
    await refused.end().catch(() => undefined);
  });
});
