import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser, uniqueEmail } from './support/factories';
import { buildPost } from './support/blog';
import { checkedRest, openApiValidator } from './support/openapi';
import { buildOpenApiDocument } from '../src/openapi/document';
import { restRoutes } from '../src/modules';

const doc = buildOpenApiDocument();
const check = openApiValidator(doc);
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Every REST route of CONTRACT 1, 4.x and 5, plus the operational ones. */
const CONTRACT_ROUTES = [
  'POST /auth/register',
  'POST /auth/login',
  'POST /auth/forgot-password',
  'POST /auth/reset-password',
  'POST /auth/verify-email/{token}',
  'POST /auth/resend-verification',
  'GET /auth/me',
  'GET /admin/users',
  'DELETE /admin/users/{id}',
  'PATCH /admin/users/{id}/restore',
  'GET /posts',
  'POST /posts',
  'GET /posts/{id}',
  'DELETE /posts/{id}',
  'PATCH /posts/{id}/publish',
  'PATCH /posts/{id}/restore',
  'POST /posts/{id}/comments',
  'GET /trash',
  'DELETE /trash',
  'PATCH /trash/{id}/restore',
  'DELETE /trash/{id}',
  'GET /tenant/posts',
  'POST /tenant/posts',
  'GET /tenant/admin/posts',
  'GET /healthz',
  'GET /readyz',
  'GET /metrics',
  'GET /openapi.json',
];

const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
  METHODS.filter((m) => item[m]).map((m) => ({ path, method: m, op: item[m]! })),
);

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 with info, tags and bearer security', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    expect(doc.components.securitySchemes.bearerAuth).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    const tagNames = doc.tags.map((t) => t.name);
    for (const { op } of operations) for (const t of op.tags) expect(tagNames).toContain(t);
  });

  it('documents every route of the contract', () => {
    const documented = operations.map(({ method, path }) => `${method.toUpperCase()} ${path}`);
    expect(documented).toEqual(expect.arrayContaining(CONTRACT_ROUTES));
  });

  it('gives every operation a unique id, responses with descriptions, and declares its path parameters', () => {
    const ids = operations.map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { path, op } of operations) {
      const statuses = Object.keys(op.responses);
      expect(statuses.length).toBeGreaterThan(0);
      expect(statuses.some((s) => /^2\d\d$/.test(s))).toBe(true);
      for (const r of Object.values(op.responses)) expect(r.description).toEqual(expect.any(String));
      const declared = (op.parameters ?? [])
        .map((p) => ('$ref' in p ? doc.components.parameters[p.$ref.split('/').pop()!] : p) as { name: string; in: string })
        .filter((p) => p.in === 'path')
        .map((p) => p.name);
      const inTemplate = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      expect(declared.sort()).toEqual(inTemplate.sort());
    }
  });

  it('declares security on every operation: none for public ones, the bearer token where required, both where optional', () => {
    const bySecurity = Object.fromEntries(operations.map(({ method, path, op }) => [`${method.toUpperCase()} ${path}`, JSON.stringify(op.security)]));
    expect(Object.values(bySecurity).every((s) => ['[]', '[{"bearerAuth":[]}]', '[{},{"bearerAuth":[]}]'].includes(s))).toBe(true);
    expect(bySecurity).toMatchObject({
      'POST /auth/register': '[]',
      'GET /posts': '[]',
      'GET /posts/{id}': '[]',
      'GET /tenant/posts': '[]',
      'GET /healthz': '[]',
      'GET /auth/me': '[{"bearerAuth":[]}]',
      'POST /posts': '[{"bearerAuth":[]}]',
      'GET /tenant/admin/posts': '[{"bearerAuth":[]}]',
      'GET /graphql': '[{},{"bearerAuth":[]}]',
      'POST /graphql': '[{},{"bearerAuth":[]}]',
    });
  });

  it('documents 401 on every bearer-protected operation and 422 with field errors on every body', () => {
    for (const { op } of operations) {
      // Protected: a token is required (no anonymous `{}` alternative).
      if (op.security?.length && op.security.every((s) => Object.keys(s).length > 0)) expect(Object.keys(op.responses)).toContain('401');
      if (op.requestBody && !op.operationId.startsWith('graphql')) expect(Object.keys(op.responses)).toContain('422');
    }
  });

  it('every $ref resolves', () => {
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    expect(refs.length).toBeGreaterThan(0);
    for (const r of refs) {
      const target = r.slice(8, -1).replace(/^#\//, '').split('/').reduce<any>((node, key) => node?.[key], doc);
      expect({ ref: r, found: target !== undefined }).toEqual({ ref: r, found: true });
    }
  });

  it('every schema is valid JSON Schema 2020-12 (strict ajv)', () => {
    const ajv = new Ajv2020({ strict: true, strictTypes: false });
    addFormats(ajv);
    const fix = (s: unknown) => JSON.parse(JSON.stringify(s).replace(/#\/components\/schemas\//g, 'c#/$defs/'));
    ajv.addSchema({ $id: 'c', $defs: fix(doc.components.schemas) });
    for (const { op } of operations) {
      for (const r of Object.values(op.responses)) for (const media of Object.values(r.content ?? {})) expect(() => ajv.compile(fix(media.schema))).not.toThrow();
      for (const media of Object.values(op.requestBody?.content ?? {})) expect(() => ajv.compile(fix(media.schema))).not.toThrow();
    }
  });

  it('the validator rejects what the contract forbids', () => {
    const user = { id: 1, name: 'A', email: 'a@example.com', role: 'user', email_verified_at: null, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' };
    expect(check.validate('GET', '/auth/me', { status: 200, body: user })).toEqual([]);
    expect(check.validate('GET', '/auth/me', { status: 200, body: { ...user, password: 'x' } })).not.toEqual([]);
    expect(check.validate('GET', '/auth/me', { status: 401, body: { message: 'Nope' } })).not.toEqual([]);
    expect(check.validate('GET', '/auth/me', { status: 418, body: { message: 'Teapot' } })).not.toEqual([]);
    expect(check.validate('GET', '/posts/7', { status: 404, body: { message: 'Post not found' } })).toEqual([]);
    expect(check.validate('GET', '/posts/7', { status: 404, body: { message: 'Nope' } })).not.toEqual([]);
    expect(check.validate('POST', '/posts', { status: 422, body: { message: 'Validation failed', errors: [{ field: 'title', message: 'x' }] } })).toEqual([]);
    expect(check.validate('POST', '/posts', { status: 422, body: { message: 'Validation failed' } })).not.toEqual([]);
    const page = { data: [], total: 0, perPage: 10, currentPage: 1, lastPage: 1, from: null, to: null, nextPage: null };
    expect(check.validate('GET', '/posts', { status: 200, body: page })).toEqual([]);
    expect(check.validate('GET', '/posts', { status: 200, body: { data: [], hasMore: false } })).toEqual([]);
    expect(check.validate('GET', '/posts', { status: 200, body: { data: [], nextCursor: null, prevCursor: null, hasNextPage: false, hasPrevPage: false, perPage: 10, path: '/posts' } })).toEqual([]);
    expect(check.validate('GET', '/posts', { status: 200, body: { data: [], has_more: false } })).not.toEqual([]);
  });
});

describe('real responses match the document', () => {
  let app: TestApp;
  let api: ReturnType<typeof clients>;
  beforeAll(async () => {
    app = await startTestApp();
    api = clients(app.url);
  });
  afterAll(() => app.close());

  it('documents every REST route the app mounts', () => {
    const mounted = restRoutes(app.built.services).map((r) => `${r.method.toUpperCase()} ${r.path.replace(/:(\w+)/g, '{$1}')}`);
    const documented = operations.map(({ method, path }) => `${method.toUpperCase()} ${path}`);
    expect(mounted.length).toBeGreaterThan(0);
    expect(documented).toEqual(expect.arrayContaining(mounted));
  });

  it('GET /openapi.json serves the document', async () => {
    const res = await api.rest('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual(JSON.parse(JSON.stringify(doc)));
  });

  it('GET /healthz and /readyz (200 and 503)', async () => {
    check.assert('GET', '/healthz', await api.rest('GET', '/healthz'));
    check.assert('GET', '/readyz', await api.rest('GET', '/readyz'));
    app.built.state.draining = true;
    try {
      const res = await api.rest('GET', '/readyz');
      expect(res.status).toBe(503);
      check.assert('GET', '/readyz', res);
    } finally {
      app.built.state.draining = false;
    }
  });

  it('GET /auth/me: 200 with a token, 401 without or with a bad one', async () => {
    const { token } = await buildUser(app);
    const ok = await api.rest('GET', '/auth/me', { token });
    expect(ok.status).toBe(200);
    check.assert('GET', '/auth/me', ok);
    for (const t of [undefined, 'not-a-jwt']) {
      const res = await api.rest('GET', '/auth/me', { token: t });
      expect(res.status).toBe(401);
      check.assert('GET', '/auth/me', res);
    }
  });

  it('tenant routes: 401 Unknown tenant, 201, 200 arrays, 422, admin 403 and 200', async () => {
    const api = checkedRest(app.url, check);
    expect((await api('GET', '/tenant/posts')).status).toBe(401);
    expect((await api('POST', '/tenant/posts', { body: { title: 'T', body: 'B' } })).status).toBe(401);
    const tenant = { 'x-tenant-id': '77' };
    expect((await api('POST', '/tenant/posts', { headers: tenant, body: { title: 'T', body: 'B' } })).status).toBe(201);
    expect((await api('POST', '/tenant/posts', { headers: tenant, body: { title: '', body: 5 } })).status).toBe(422);
    expect((await api('POST', '/tenant/posts', { headers: tenant, rawBody: '{"title":' })).status).toBe(400);
    const list = await api('GET', '/tenant/posts', { headers: tenant });
    expect(list.status).toBe(200);
    expect(list.body.length).toBeGreaterThan(0);
    const user = await buildUser(app);
    const admin = await buildUser(app, { role: 'admin' });
    expect((await api('GET', '/tenant/admin/posts')).status).toBe(401);
    expect((await api('GET', '/tenant/admin/posts', { token: user.token })).status).toBe(403);
    expect((await api('GET', '/tenant/admin/posts', { token: admin.token })).status).toBe(200);
  });

  it('checkedRest holds every answer to the document', async () => {
    const checked = checkedRest(app.url, check);
    expect((await checked('GET', '/healthz')).status).toBe(200);
    expect((await checked('GET', '/auth/me?x=1')).status).toBe(401);
    // /auth/me answers 401 Unauthenticated; a document claiming another message must make it throw.
    const strict = openApiValidator(JSON.parse(JSON.stringify(doc).replaceAll('"enum":["Unauthenticated","Invalid token","User not found"]', '"enum":["Something else"]')));
    await expect(checkedRest(app.url, strict)('GET', '/auth/me')).rejects.toThrow(/does not match openapi\.json/);
  });

  it('valid requests the suite sends match the documented request bodies, and the server takes them', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(doc, 'openapi');
    const pointer = (path: string, method: string) => `openapi#/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}/requestBody/content/application~1json/schema`;
    const requestProblems = (method: string, template: string, body: unknown) => {
      const validate = ajv.compile({ $ref: pointer(template, method.toLowerCase()) });
      return validate(body) ? [] : validate.errors!.map((e) => `${e.instancePath} ${e.message}`);
    };
    const { user, token } = await buildUser(app);
    const email = uniqueEmail('doc');
    const post = await buildPost(app, user);
    const tenant = { 'x-tenant-id': '78' };
    const requests: [method: string, template: string, path: string, body: unknown, opts: { token?: string; headers?: Record<string, string> }, status: number][] = [
      ['POST', '/auth/register', '/auth/register', { name: 'Ada', email, password: 'password123' }, {}, 201],
      // 6 letters, 12 bytes: the server takes it, so the document must (its old minLength 8 did not).
      ['POST', '/auth/register', '/auth/register', { name: '  Padded  ', email: uniqueEmail('Doc.Mixed').toUpperCase(), password: 'пароль' }, {}, 201],
      ['POST', '/auth/register', '/auth/register', { name: 'n'.repeat(255), email: uniqueEmail('max'), password: 'p'.repeat(72), role: 'admin' }, {}, 201],
      ['POST', '/auth/login', '/auth/login', { email: email.toUpperCase(), password: 'password123' }, {}, 200],
      ['POST', '/auth/forgot-password', '/auth/forgot-password', { email }, {}, 200],
      // Well-formed, but no such secret was mailed: the shape is what is checked here.
      ['POST', '/auth/reset-password', '/auth/reset-password', { token: 'a'.repeat(64), password: 'new-password' }, {}, 400],
      ['POST', '/posts', '/posts', { title: 'Hello World', body: 'Text' }, { token }, 201],
      ['POST', '/posts', '/posts', { title: 't'.repeat(255), body: 'b'.repeat(100_000), user_id: 999, published: true, slug: 'x' }, { token }, 201],
      ['POST', '/posts/{id}/comments', `/posts/${post.id}/comments`, { body: 'First!' }, { token }, 201],
      ['POST', '/posts/{id}/comments', `/posts/${post.id}/comments`, { body: 'c'.repeat(10_000) }, { token }, 201],
      ['POST', '/tenant/posts', '/tenant/posts', { title: 'T', body: 'B', tenant_id: 79 }, { headers: tenant }, 201],
    ];
    for (const [method, template, path, body, opts, status] of requests) {
      const label = `${method} ${template} ${JSON.stringify(body).slice(0, 80)}`;
      expect({ label, problems: requestProblems(method, template, body) }).toEqual({ label, problems: [] });
      expect({ label, status: (await api.rest(method, path, { ...opts, body })).status }).toEqual({ label, status });
    }
  });

  it('unknown route → 404 Not found; wrong method → 405', async () => {
    const res = await api.rest('GET', '/no/such/route');
    expect(res.status).toBe(404);
    check.assert('GET', '/no/such/route', res);
    const wrong = await api.rest('DELETE', '/healthz');
    expect(wrong.status).toBe(405);
    check.assert('DELETE', '/healthz', wrong);
  });
});
