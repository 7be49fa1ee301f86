import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { loadConfig } from '../src/config/config';
import { tmpdir } from 'node:os';
import { initOrm, migrate } from '../src/db/orm';
import { migrationsList } from '../src/db/migrations';
import jwt from 'jsonwebtoken';

let app: TestApp;
let api: ReturnType<typeof clients>;

beforeAll(async () => {
  app = await startTestApp();
  api = clients(app.url);
});
afterAll(() => app.close());

describe('operational endpoints', () => {
  it('GET /healthz answers 200 while the process is up', async () => {
    const res = await api.rest('GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('GET /readyz answers 200 when the database is reachable, 503 while draining', async () => {
    expect((await api.rest('GET', '/readyz')).status).toBe(200);
    app.built.state.draining = true;
    try {
      const res = await api.rest('GET', '/readyz');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ message: 'Service unavailable' });
    } finally {
      app.built.state.draining = false;
    }
  });
});

describe('HTTP edges', () => {
  it('unknown route → 404 Not found', async () => {
    const res = await api.rest('GET', '/no/such/route');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'Not found' });
  });

  it('known path with the wrong method → 405 with Allow', async () => {
    const res = await api.rest('DELETE', '/healthz');
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ message: 'Method not allowed' });
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });

  it('malformed JSON → 400 Malformed JSON', async () => {
    const res = await api.rest('POST', '/graphql', { rawBody: '{"query": ' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'Malformed JSON' });
  });

  it('a body over 1 MB → 413 Payload too large', async () => {
    const res = await api.rest('POST', '/graphql', { rawBody: JSON.stringify({ query: 'x'.repeat(1_100_000) }) });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ message: 'Payload too large' });
  });
});

describe('authentication steps (SPEC 5.2) on GET /auth/me and GraphQL me', () => {
  it('no token → 401 Unauthenticated; GraphQL me is null', async () => {
    const res = await api.rest('GET', '/auth/me');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: 'Unauthenticated' });
    const g = await api.gql('{ me { id } }');
    expect(g.status).toBe(200);
    expect(g.data).toEqual({ me: null });
  });

  it('a token that fails verification → 401 Invalid token, on both surfaces', async () => {
    const res = await api.rest('GET', '/auth/me', { token: 'not-a-jwt' });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: 'Invalid token' });
    const g = await api.gql('{ me { id } }', undefined, { token: 'not-a-jwt' });
    expect(g.errors?.[0]).toMatchObject({ message: 'Invalid token', extensions: { code: 'UNAUTHENTICATED' } });
  });

  it('alg none is refused', async () => {
    const { user } = await buildUser(app);
    const forged = jwt.sign({ id: user.id, tv: user.tokenVersion }, '', { algorithm: 'none' });
    const res = await api.rest('GET', '/auth/me', { token: forged });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: 'Invalid token' });
  });

  it('a valid token for a missing user → 401 User not found', async () => {
    const token = jwt.sign({ id: 999999, tv: 1 }, app.config.jwtSecret!, { algorithm: 'HS256', expiresIn: '7d' });
    const res = await api.rest('GET', '/auth/me', { token });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: 'User not found' });
  });

  it('a valid token → the bare user, without password', async () => {
    const { user, token } = await buildUser(app, { name: 'Ada' });
    const res = await api.rest('GET', '/auth/me', { token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: user.id,
      name: 'Ada',
      email: user.email,
      role: 'user',
      email_verified_at: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: expect.any(String),
    });
    const g = await api.gql('{ me { id name email role emailVerifiedAt } }', undefined, { token });
    expect(g.data).toEqual({ me: { id: user.id, name: 'Ada', email: user.email, role: 'user', emailVerifiedAt: null } });
  });
});

describe('configuration', () => {
  it('production refuses to start without a long JWT_SECRET, SMTP_URL and APP_URL, naming them', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/JWT_SECRET.*SMTP_URL.*APP_URL/);
    expect(() => loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'short', SMTP_URL: 'smtp://x', APP_URL: 'http://x' })).toThrow(/JWT_SECRET/);
  });

  it('names a malformed setting', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT: must be a whole number/);
  });

  it('defaults follow CONTRACT 2', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 3000, bcryptCost: 12, resetTokenTtlMinutes: 60, trashRetentionDays: 30, authRateLimitPerMinute: 300, shutdownTimeoutMs: 10000 });
  });
});

describe('database', () => {
  it('the committed migrations produce exactly the schema the entities describe', async () => {
    const diff = await app.orm.schema.getUpdateSchemaSQL({ wrap: false });
    expect(diff.trim()).toBe('');
  });

  it('migrate() applies a migration the database lacks, from a process started in another directory; it skips the migrator only when every migration is applied', async () => {
    // A service started outside the project (`cd / && node /app/dist/src/main.js`): MikroORM
    // resolves a package it loads by itself (the migrator) from the working directory.
    const cwd = process.cwd();
    process.chdir(tmpdir());
    const orm = await initOrm({ clientUrl: app.databaseUrl, poolMax: 2 });
    try {
      const em = orm.em.fork();
      await em.execute(`delete from mikro_orm_migrations where name = 'Migration20261125120000JobRuns'`);
      await em.execute('drop table job_runs');
      await migrate(orm);
      // By name (timestamped): the migration put back is applied after those that came later.
      const rows = await em.execute<{ name: string }[]>('select name from mikro_orm_migrations order by name');
      expect(rows.map((r) => r.name)).toEqual(migrationsList.map((m) => m.name));
      expect((await em.execute<{ t: string }[]>(`select to_regclass('job_runs') as t`))[0].t).toBe('job_runs');
    } finally {
      process.chdir(cwd);
      await orm.close(true);
    }
  });
});

describe('GraphQL request errors', () => {
  it('an unknown field is BAD_USER_INPUT with graphql-js message, HTTP 200', async () => {
    const g = await api.gql('{ me { nope } }');
    expect(g.status).toBe(200);
    expect(g.errors?.[0]).toMatchObject({ message: 'Cannot query field "nope" on type "User". Did you mean "name" or "role"?', extensions: { code: 'BAD_USER_INPUT' } });
  });

  it('a syntax error is BAD_USER_INPUT, HTTP 200', async () => {
    const g = await api.gql('{ me { ');
    expect(g.status).toBe(200);
    expect(g.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    expect(g.errors?.[0].message).toMatch(/^Syntax Error/);
  });
});
