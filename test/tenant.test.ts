import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createApp } from '../src/app';
import type { TenantResolver } from '../src/core/tenant';
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { asTenant, freshTenant, seedTenantPosts, TENANT_POST_FIELDS, type TenantPostJson } from './support/tenants';

let app: TestApp;
let api: ReturnType<typeof clients>;

beforeAll(async () => {
  app = await startTestApp();
  api = clients(app.url);
});
afterAll(() => app.close());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const LIST = `{ tenantPosts { ${TENANT_POST_FIELDS} } }`;
const CREATE = `mutation ($title: String!, $body: String!) { createTenantPost(title: $title, body: $body) { ${TENANT_POST_FIELDS} } }`;
const ALL = `{ allTenantPosts { ${TENANT_POST_FIELDS} } }`;

// Header values that resolve no tenant: missing, zero, negative, non-numeric, fractional,
// beyond 32 bits, absurdly long, two values, empty, signs and exponents.
const BAD_TENANT_HEADERS: Array<[string, Record<string, string>]> = [
  ['missing', {}],
  ['zero', { 'x-tenant-id': '0' }],
  ['negative', { 'x-tenant-id': '-1' }],
  ['non-numeric', { 'x-tenant-id': 'acme' }],
  ['fractional', { 'x-tenant-id': '1.5' }],
  ['just past int32', { 'x-tenant-id': '2147483648' }],
  ['huge', { 'x-tenant-id': '9'.repeat(4000) }],
  ['two values', { 'x-tenant-id': '1, 2' }],
  ['empty', { 'x-tenant-id': '' }],
  ['plus sign', { 'x-tenant-id': '+5' }],
  ['exponent', { 'x-tenant-id': '1e3' }],
  ['hex', { 'x-tenant-id': '0x10' }],
];

describe('401 Unknown tenant when no tenant resolves', () => {
  it.each(BAD_TENANT_HEADERS)('%s x-tenant-id: REST GET and POST /tenant/posts answer 401', async (_label, headers) => {
    const list = await api.rest('GET', '/tenant/posts', { headers });
    expect(list.status).toBe(401);
    expect(list.body).toEqual({ message: 'Unknown tenant' });
    const create = await api.rest('POST', '/tenant/posts', { headers, body: { title: 'T', body: 'B' } });
    expect(create.status).toBe(401);
    expect(create.body).toEqual({ message: 'Unknown tenant' });
  });

  it.each(BAD_TENANT_HEADERS)('%s x-tenant-id: GraphQL tenantPosts and createTenantPost answer UNAUTHENTICATED', async (_label, headers) => {
    const list = await api.gql(LIST, undefined, { headers });
    expect(list.status).toBe(200);
    expect(list.data).toBeNull();
    expect(list.errors).toHaveLength(1);
    expect(list.errors![0]).toMatchObject({ message: 'Unknown tenant', extensions: { code: 'UNAUTHENTICATED' }, path: ['tenantPosts'] });
    const create = await api.gql(CREATE, { title: 'T', body: 'B' }, { headers });
    expect(create.data).toBeNull();
    expect(create.errors![0]).toMatchObject({ message: 'Unknown tenant', extensions: { code: 'UNAUTHENTICATED' } });
  });

  it('a failed create writes nothing', async () => {
    const before = await app.orm.em.fork().getConnection().execute('select count(*)::int as n from tenant_posts');
    await api.rest('POST', '/tenant/posts', { headers: { 'x-tenant-id': '0' }, body: { title: 'T', body: 'B' } });
    await api.gql(CREATE, { title: 'T', body: 'B' }, { headers: { 'x-tenant-id': '-3' } });
    const after = await app.orm.em.fork().getConnection().execute('select count(*)::int as n from tenant_posts');
    expect(after[0].n).toBe(before[0].n);
  });

  it('the largest 32-bit id is a tenant: 200 and an empty list', async () => {
    const res = await api.rest('GET', '/tenant/posts', { headers: asTenant(2147483647) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });

  it('surrounding whitespace in the header is tolerated', async () => {
    const tenant = freshTenant();
    const res = await api.rest('POST', '/tenant/posts', { headers: { 'x-tenant-id': ` ${tenant} ` }, body: { title: 'T', body: 'B' } });
    expect(res.status).toBe(201);
    expect(res.body.tenant_id).toBe(tenant);
  });
});

describe('POST /tenant/posts and createTenantPost', () => {
  it('201 with the post; tenant_id comes from the header even when the body carries one', async () => {
    const tenant = freshTenant();
    const other = freshTenant();
    const res = await api.rest<TenantPostJson>('POST', '/tenant/posts', {
      headers: asTenant(tenant),
      body: { title: '  Hello  ', body: 'World', tenant_id: other, tenantId: other, id: 999999, created_at: '2000-01-01T00:00:00.000Z' },
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['body', 'created_at', 'id', 'tenant_id', 'title', 'updated_at']);
    expect(res.body).toMatchObject({ tenant_id: tenant, title: 'Hello', body: 'World' });
    expect(res.body.id).not.toBe(999999);
    expect(res.body.created_at).toMatch(ISO);
    expect(res.body.updated_at).toMatch(ISO);
    expect(res.body.created_at).not.toBe('2000-01-01T00:00:00.000Z');

    const mine = await api.rest('GET', '/tenant/posts', { headers: asTenant(tenant) });
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual([res.body]);
    const theirs = await api.rest('GET', '/tenant/posts', { headers: asTenant(other) });
    expect(theirs.body).toEqual([]);
  });

  it('GraphQL: the post has tenantId from the header; a tenantId argument does not exist', async () => {
    const tenant = freshTenant();
    const res = await api.gql(CREATE, { title: 'G title', body: 'G body' }, { headers: asTenant(tenant) });
    expect(res.errors).toBeUndefined();
    const post = res.data.createTenantPost;
    expect(post).toEqual({ id: expect.any(Number), tenantId: tenant, title: 'G title', body: 'G body', createdAt: expect.stringMatching(ISO), updatedAt: expect.stringMatching(ISO) });
    const rest = await api.rest('GET', '/tenant/posts', { headers: asTenant(tenant) });
    expect(rest.body).toEqual([{ id: post.id, tenant_id: tenant, title: 'G title', body: 'G body', created_at: post.createdAt, updated_at: post.updatedAt }]);

    const smuggled = await api.gql(`mutation { createTenantPost(title: "x", body: "y", tenantId: ${tenant + 1}) { id } }`, undefined, { headers: asTenant(tenant) });
    // Rejected by GraphQL validation before any resolver runs. (Its code should be BAD_USER_INPUT;
    // the shared formatError currently reports validation errors as INTERNAL_SERVER_ERROR.)
    expect(smuggled.data).toBeUndefined();
    expect(smuggled.errors).toHaveLength(1);
    expect((await api.rest('GET', '/tenant/posts', { headers: asTenant(tenant + 1) })).body).toEqual([]);
    expect((await api.rest('GET', '/tenant/posts', { headers: asTenant(tenant) })).body).toHaveLength(1);
  });

  it('title of 255 and body of 100,000 characters are accepted', async () => {
    const tenant = freshTenant();
    const res = await api.rest('POST', '/tenant/posts', { headers: asTenant(tenant), body: { title: 't'.repeat(255), body: 'b'.repeat(100_000) } });
    expect(res.status).toBe(201);
    expect(res.body.title).toHaveLength(255);
    expect(res.body.body).toHaveLength(100_000);
  });
});

describe('422 Validation failed (after the tenant check)', () => {
  const cases: Array<[string, unknown, Array<{ field: string | null; message: string }>]> = [
    ['empty object', {}, [{ field: 'title', message: 'title is required' }, { field: 'body', message: 'body is required' }]],
    ['blank strings', { title: '   ', body: '' }, [{ field: 'title', message: 'title is required' }, { field: 'body', message: 'body is required' }]],
    ['too long', { title: 't'.repeat(256), body: 'b'.repeat(100_001) }, [{ field: 'title', message: 'title must be at most 255 characters' }, { field: 'body', message: 'body must be at most 100000 characters' }]],
    ['wrong types', { title: 5, body: ['x'] }, [{ field: 'title', message: 'title must be a string' }, { field: 'body', message: 'body must be a string' }]],
    ['null fields', { title: null, body: null }, [{ field: 'title', message: 'title must be a string' }, { field: 'body', message: 'body must be a string' }]],
    ['an array body', [{ title: 'a', body: 'b' }], [{ field: null, message: 'Body must be a JSON object' }]],
    ['a string body', 'hello', [{ field: null, message: 'Body must be a JSON object' }]],
    ['a null body', null, [{ field: null, message: 'Body must be a JSON object' }]],
  ];

  it.each(cases)('REST %s → 422 with every problem listed', async (_label, body, errors) => {
    const res = await api.rest('POST', '/tenant/posts', { headers: asTenant(freshTenant()), rawBody: JSON.stringify(body) });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ message: 'Validation failed', errors });
  });

  it('REST with no body at all → 422 for the body as a whole', async () => {
    const res = await api.rest('POST', '/tenant/posts', { headers: asTenant(freshTenant()) });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ message: 'Validation failed', errors: [{ field: null, message: 'Body must be a JSON object' }] });
  });

  it('GraphQL: same schema, same messages, BAD_USER_INPUT with extensions.errors', async () => {
    const res = await api.gql(CREATE, { title: ' ', body: 'b'.repeat(100_001) }, { headers: asTenant(freshTenant()) });
    expect(res.data).toBeNull();
    expect(res.errors![0]).toMatchObject({
      message: 'Validation failed',
      extensions: {
        code: 'BAD_USER_INPUT',
        errors: [
          { field: 'title', message: 'title is required' },
          { field: 'body', message: 'body must be at most 100000 characters' },
        ],
      },
    });
  });

  it('unknown tenant wins over invalid input on both surfaces (401 before 422)', async () => {
    const res = await api.rest('POST', '/tenant/posts', { body: { title: '' } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: 'Unknown tenant' });
    const g = await api.gql(CREATE, { title: '', body: '' }, { headers: { 'x-tenant-id': 'nope' } });
    expect(g.errors![0]).toMatchObject({ message: 'Unknown tenant', extensions: { code: 'UNAUTHENTICATED' } });
  });

  it('malformed JSON is 400 before the tenant check (CONTRACT 7 precedence)', async () => {
    const res = await api.rest('POST', '/tenant/posts', { rawBody: '{"title":' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'Malformed JSON' });
  });

  it('a failed validation writes nothing', async () => {
    const tenant = freshTenant();
    await api.rest('POST', '/tenant/posts', { headers: asTenant(tenant), body: { title: '' , body: 'x' } });
    await api.gql(CREATE, { title: 'x', body: '' }, { headers: asTenant(tenant) });
    expect((await api.rest('GET', '/tenant/posts', { headers: asTenant(tenant) })).body).toEqual([]);
  });
});

describe('GET /tenant/posts and tenantPosts', () => {
  it("200 with only the current tenant's posts, id ascending, on both surfaces", async () => {
    const a = freshTenant();
    const b = freshTenant();
    const seededA = await seedTenantPosts(app, a, 3);
    await seedTenantPosts(app, b, 2);
    const res = await api.rest<TenantPostJson[]>('GET', '/tenant/posts', { headers: asTenant(a) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(seededA);
    expect(res.body.map((p) => p.id)).toEqual([...res.body.map((p) => p.id)].sort((x, y) => x - y));
    const g = await api.gql(LIST, undefined, { headers: asTenant(a) });
    expect(g.errors).toBeUndefined();
    expect(g.data.tenantPosts).toEqual(
      seededA.map((p) => ({ id: p.id, tenantId: p.tenant_id, title: p.title, body: p.body, createdAt: p.created_at, updatedAt: p.updated_at })),
    );
  });

  it('a tenant route needs no authentication: a bad bearer token is not looked at', async () => {
    const tenant = freshTenant();
    const res = await api.rest('GET', '/tenant/posts', { headers: asTenant(tenant), token: 'not-a-jwt' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });

  it('unknown methods and paths under /tenant answer 405 and 404', async () => {
    const del = await api.rest('DELETE', '/tenant/posts', { headers: asTenant(1) });
    expect(del.status).toBe(405);
    expect(del.headers.get('allow')).toBe('GET, HEAD, POST');
    expect(del.body).toEqual({ message: 'Method not allowed' });
    const post = await api.rest('POST', '/tenant/admin/posts', { headers: asTenant(1), body: {} });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const missing = await api.rest('GET', '/tenant/posts/1', { headers: asTenant(1) });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: 'Not found' });
  });
});

describe('GET /tenant/admin/posts and allTenantPosts (role admin, filter lifted)', () => {
  it('401 without a token, 401 Invalid token with a bad one, on both surfaces', async () => {
    const none = await api.rest('GET', '/tenant/admin/posts');
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ message: 'Unauthenticated' });
    const bad = await api.rest('GET', '/tenant/admin/posts', { token: 'x.y.z', headers: asTenant(1) });
    expect(bad.status).toBe(401);
    expect(bad.body).toEqual({ message: 'Invalid token' });
    const g = await api.gql(ALL);
    expect(g.data).toBeNull();
    expect(g.errors![0]).toMatchObject({ message: 'Unauthenticated', extensions: { code: 'UNAUTHENTICATED' } });
    const gBad = await api.gql(ALL, undefined, { token: 'x.y.z' });
    expect(gBad.errors![0]).toMatchObject({ message: 'Invalid token', extensions: { code: 'UNAUTHENTICATED' } });
  });

  it.each(['user', 'moderator'] as const)('403 Forbidden for role %s, with or without a tenant', async (role) => {
    const { token } = await buildUser(app, { role });
    for (const headers of [{}, asTenant(1)]) {
      const res = await api.rest('GET', '/tenant/admin/posts', { token, headers });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ message: 'Forbidden' });
      const g = await api.gql(ALL, undefined, { token, headers });
      expect(g.data).toBeNull();
      expect(g.errors![0]).toMatchObject({ message: 'Forbidden', extensions: { code: 'FORBIDDEN' } });
    }
  });

  it('200 for an admin: posts of every tenant, id ascending, with or without a tenant header', async () => {
    const a = freshTenant();
    const b = freshTenant();
    const seeded = [...(await seedTenantPosts(app, a, 2)), ...(await seedTenantPosts(app, b, 2))];
    const { token } = await buildUser(app, { role: 'admin' });
    const truth = (await app.orm.em.fork().getConnection().execute<Array<{ id: number }>>('select id from tenant_posts order by id')).map((r) => r.id);

    for (const headers of [{}, asTenant(a), { 'x-tenant-id': 'garbage' }]) {
      const res = await api.rest<TenantPostJson[]>('GET', '/tenant/admin/posts', { token, headers });
      expect(res.status).toBe(200);
      expect(res.body.map((p) => p.id)).toEqual(truth);
      for (const s of seeded) expect(res.body).toContainEqual(s);
      expect(res.body.some((p) => p.tenant_id === a) && res.body.some((p) => p.tenant_id === b)).toBe(true);

      const g = await api.gql(ALL, undefined, { token, headers });
      expect(g.errors).toBeUndefined();
      expect(g.data.allTenantPosts.map((p: { id: number }) => p.id)).toEqual(truth);
      expect(g.data.allTenantPosts).toContainEqual({ id: seeded[3].id, tenantId: b, title: seeded[3].title, body: seeded[3].body, createdAt: seeded[3].created_at, updatedAt: seeded[3].updated_at });
    }
  });
});

describe('the tenant condition is in the SQL', () => {
  const tenantSelects = () => app.sql.filter((s) => /select .* from "tenant_posts"/.test(s));

  it('a tenant read (REST and GraphQL) filters tenant_posts by tenant_id = the tenant', async () => {
    const tenant = freshTenant();
    // The logged SQL carries placeholders; what is sent is a named prepared statement whose value
    // is the tenant (db/prepared.ts), which the ORM logger's context carries with the statement.
    const logger = app.orm.config.getLogger();
    const bound: Array<{ sql: string; bindings: readonly unknown[] }> = [];
    const logQuery = logger.logQuery.bind(logger);
    const watch = jest.spyOn(logger, 'logQuery').mockImplementation((context) => {
      bound.push({ sql: context.query ?? '', bindings: context.params ?? [] });
      logQuery(context);
    });
    try {
      for (const call of [() => api.rest('GET', '/tenant/posts', { headers: asTenant(tenant) }), () => api.gql(LIST, undefined, { headers: asTenant(tenant) })]) {
        app.sql.length = 0;
        bound.length = 0;
        await call();
        const selects = tenantSelects();
        expect(selects).toHaveLength(1);
        expect(selects[0]).toMatch(/from "tenant_posts" as "(\w+)" where "\1"\."tenant_id" = \$1 order by "\1"\."id" asc/);
        const reads = bound.filter((q) => /from "tenant_posts"/.test(q.sql));
        expect(reads).toHaveLength(1);
        expect(reads[0].sql).toMatch(/from "tenant_posts" as "(\w+)" where "\1"\."tenant_id" = (\?|\$1) order by/);
        expect(reads[0].bindings).toEqual([tenant]);
      }
    } finally {
      watch.mockRestore();
    }
  });

  it('the admin read has no tenant condition even with a tenant header', async () => {
    const { token } = await buildUser(app, { role: 'admin' });
    app.sql.length = 0;
    await api.rest('GET', '/tenant/admin/posts', { token, headers: asTenant(5) });
    const selects = tenantSelects();
    expect(selects).toHaveLength(1);
    expect(selects[0]).not.toMatch(/tenant_id"? =/);
  });

  it('a rejected tenant request issues no SQL against tenant_posts', async () => {
    app.sql.length = 0;
    await api.rest('GET', '/tenant/posts', { headers: { 'x-tenant-id': '0' } });
    await api.gql(LIST);
    expect(app.sql.filter((s) => s.includes('tenant_posts'))).toEqual([]);
  });
});

describe('the tenant resolver is replaceable', () => {
  // A subdomain resolver: `t<id>.tenants.test` is tenant <id>; anything else resolves none.
  const subdomainResolver: TenantResolver = (req) => {
    const m = /^t([1-9]\d{0,8})\.tenants\.test$/.exec(req.hostname ?? '');
    return m ? Number(m[1]) : null;
  };

  let server: Server;
  let port: number;
  let closeApp: () => Promise<void>;

  beforeAll(async () => {
    const built = await createApp(app.built.services.deps, { resolveTenant: subdomainResolver });
    closeApp = () => built.close();
    server = await new Promise((resolve) => {
      const s = built.listen(0, '127.0.0.1', () => resolve(s));
    });
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await closeApp();
  });

  /** fetch cannot set Host, so this goes through node:http. */
  function call(method: string, path: string, host: string, opts: { body?: unknown; headers?: Record<string, string> } = {}) {
    return new Promise<{ status: number; body: any }>((resolve, reject) => {
      const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
      const req = httpRequest(
        { host: '127.0.0.1', port, method, path, headers: { host, ...(payload ? { 'content-type': 'application/json' } : {}), ...opts.headers } },
        (res) => {
          let data = '';
          res.setEncoding('utf8');
          res.on('data', (c) => (data += c));
          res.on('end', () => resolve({ status: res.statusCode!, body: data ? JSON.parse(data) : undefined }));
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  it('the subdomain picks the tenant on both surfaces; x-tenant-id is then ignored', async () => {
    const tenant = freshTenant();
    const host = `t${tenant}.tenants.test`;
    const created = await call('POST', '/tenant/posts', host, { body: { title: 'Sub', body: 'domain' }, headers: asTenant(tenant + 1) });
    expect(created.status).toBe(201);
    expect(created.body.tenant_id).toBe(tenant);

    const list = await call('GET', '/tenant/posts', host, { headers: asTenant(tenant + 1) });
    expect(list.status).toBe(200);
    expect(list.body).toEqual([created.body]);

    const g = await call('POST', '/graphql', host, { body: { query: '{ tenantPosts { id tenantId } }' } });
    expect(g.body.data).toEqual({ tenantPosts: [{ id: created.body.id, tenantId: tenant }] });

    // The same post is invisible to the header-resolved app for any other tenant, visible for its own.
    expect((await api.rest('GET', '/tenant/posts', { headers: asTenant(tenant) })).body).toEqual([created.body]);
    expect((await api.rest('GET', '/tenant/posts', { headers: asTenant(tenant + 1) })).body).toEqual([]);
  });

  it('a host that is not a tenant subdomain is 401 Unknown tenant, whatever the header says', async () => {
    const res = await call('GET', '/tenant/posts', '127.0.0.1', { headers: asTenant(1) });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: 'Unknown tenant' });
    const g = await call('POST', '/graphql', 'www.tenants.test', { body: { query: '{ tenantPosts { id } }' }, headers: asTenant(1) });
    expect(g.body.errors[0]).toMatchObject({ message: 'Unknown tenant', extensions: { code: 'UNAUTHENTICATED' } });
  });
});
