import { connect } from 'node:net';
import { deflateSync, gzipSync, brotliCompressSync } from 'node:zlib';
import { buildSchema, parse, validate } from 'graphql';
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser, uniqueEmail } from './support/factories';
import { buildPost } from './support/blog';
import { restRoutes } from '../src/modules';
import type { RouteDef } from '../src/http/routes';
import { limitRules, LIMITS } from '../src/graphql/limits';
import { bodyObject, parseInput, text } from '../src/core/validation';
import { listRequestFromQuery } from '../src/core/pagination';
import { AppError, toAppError } from '../src/core/errors';
import { User } from '../src/modules/user/user.entity';

/**
 * CONTRACT 7 precedence (404 → 405 → 413 → 400 → 401/404/403 → 422) and the odd requests
 * around it, on both surfaces. Routes come from the route table, so features added later are
 * covered without touching this file.
 */
let app: TestApp;
let api: ReturnType<typeof clients>;
let routes: RouteDef[];

beforeAll(async () => {
  app = await startTestApp();
  api = clients(app.url);
  routes = restRoutes(app.built.services);
});
afterAll(() => app.close());

const HUGE = JSON.stringify({ x: 'y'.repeat(1_100_000) });
const fill = (path: string, value = '1') => path.replace(/:(\w+)/g, () => value);
const bodyRoutes = () => routes.filter((r) => r.method !== 'get');
/** Every route that reads a body, and /graphql, which always does. */
const bodyTargets = () => [...bodyRoutes().map((r) => ({ method: r.method.toUpperCase(), path: fill(r.path) })), { method: 'POST', path: '/graphql' }];
/** A method this path does not accept, if there is one. */
function wrongMethod(path: string): string | undefined {
  const taken = new Set(routes.filter((r) => fill(r.path) === path || r.path === path).map((r) => r.method.toUpperCase()));
  return ['PUT', 'PATCH', 'DELETE', 'POST', 'GET'].find((m) => !taken.has(m));
}

/** What `fn` throws; undefined when it returns. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}

async function raw(method: string, path: string, init: { body?: Buffer | string; headers?: Record<string, string> } = {}) {
  const res = await fetch(app.url + path, { method, body: init.body, headers: init.headers });
  const textBody = await res.text();
  let body: any;
  try {
    body = textBody ? JSON.parse(textBody) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text: textBody };
}

describe('REST precedence (CONTRACT 7)', () => {
  it('unknown route → 404 Not found, whatever the method or body', async () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      const plain = await api.rest(method, '/no/such/route');
      expect({ status: plain.status, body: plain.body }).toEqual({ status: 404, body: { message: 'Not found' } });
      if (method === 'GET') continue;
      const malformed = await api.rest(method, '/no/such/route', { rawBody: '{"a":' });
      expect({ status: malformed.status, body: malformed.body }).toEqual({ status: 404, body: { message: 'Not found' } });
      const huge = await api.rest(method, '/no/such/route', { rawBody: HUGE });
      expect({ status: huge.status, body: huge.body }).toEqual({ status: 404, body: { message: 'Not found' } });
    }
    expect((await api.rest('GET', '/')).status).toBe(404);
    expect((await api.rest('GET', '/healthz/extra')).status).toBe(404);
  });

  it('every known path with a method it does not take → 405 with Allow, before the body is read', async () => {
    const paths = new Set([...routes.map((r) => fill(r.path)), '/healthz', '/readyz', '/graphql']);
    for (const path of paths) {
      const method = wrongMethod(path === '/graphql' ? '' : path) ?? 'PUT';
      if (path === '/graphql' && method !== 'PUT') continue;
      for (const rawBody of [undefined, '{"a":', HUGE]) {
        const res = await api.rest(method, path, { rawBody });
        expect({ path, method, status: res.status, body: res.body }).toEqual({ path, method, status: 405, body: { message: 'Method not allowed' } });
        const allow = res.headers.get('allow')!.split(', ');
        expect(allow).not.toContain(method);
        expect(allow.length).toBeGreaterThan(0);
      }
    }
    const res = await api.rest('PUT', '/graphql');
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
  });

  it('a body over 1 MB → 413 Payload too large, before malformed JSON and before authentication', async () => {
    for (const { method, path } of bodyTargets()) {
      const res = await api.rest(method, path, { rawBody: HUGE.slice(0, -3) });
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 413, body: { message: 'Payload too large' } });
    }
  });

  it('malformed JSON → 400 Malformed JSON, before authentication and validation', async () => {
    for (const { method, path } of bodyTargets()) {
      for (const rawBody of ['{"a":', '{a:1}', "{'a':1}", '[1,]', 'nul', '{"a":1}}', '\u0000']) {
        const res = await api.rest(method, path, { rawBody });
        expect({ path, rawBody, status: res.status, body: res.body }).toEqual({ path, rawBody, status: 400, body: { message: 'Malformed JSON' } });
      }
    }
  });

  it('a JSON body that is not an object → exactly 422 Validation failed about the body as a whole, on every route that reads one', async () => {
    const { user, token } = await buildUser(app);
    const post = await buildPost(app, user);
    const comment = await api.rest('POST', `/posts/${post.id}/comments`, { rawBody: JSON.stringify({ body: 'A comment to edit' }), token });
    expect(comment.status).toBe(201);
    const commentId = (comment.body as { id: number }).id;
    /** Every route that reads a body, with what it needs to get past 401/404 to its input check. */
    const withBody: Record<string, { path: string; token?: string; headers?: Record<string, string> }> = {
      'POST /auth/register': { path: '/auth/register' },
      'POST /auth/login': { path: '/auth/login' },
      'POST /auth/forgot-password': { path: '/auth/forgot-password' },
      'POST /auth/reset-password': { path: '/auth/reset-password' },
      'POST /posts': { path: '/posts', token },
      'POST /posts/:id/comments': { path: `/posts/${post.id}/comments`, token },
      'POST /tenant/posts': { path: '/tenant/posts', token, headers: { 'x-tenant-id': '1' } },
      'PATCH /posts/:id': { path: `/posts/${post.id}`, token },
      'PATCH /comments/:id': { path: `/comments/${commentId}`, token },
      'PATCH /auth/me': { path: '/auth/me', token },
      'POST /auth/change-password': { path: '/auth/change-password', token },
    };
    /** Routes that take no body: they ignore one, whatever it is. */
    const withoutBody = [
      'POST /auth/verify-email/:token', 'POST /auth/resend-verification',
      'PATCH /posts/:id/publish', 'DELETE /posts/:id', 'PATCH /posts/:id/restore',
      'DELETE /trash', 'PATCH /trash/:id/restore', 'DELETE /trash/:id',
      'DELETE /admin/users/:id', 'PATCH /admin/users/:id/restore', 'DELETE /comments/:id',
    ];
    // A route added later must be sorted into one list or the other.
    expect(bodyRoutes().map((r) => `${r.method.toUpperCase()} ${r.path}`).sort()).toEqual([...Object.keys(withBody), ...withoutBody].sort());
    for (const [route, target] of Object.entries(withBody)) {
      for (const rawBody of ['[]', '[{"a":1}]', '"text"', '42', 'true', 'null']) {
        const res = await api.rest(route.split(' ')[0], target.path, { rawBody, token: target.token, headers: target.headers });
        expect({ route, rawBody, status: res.status, body: res.body }).toEqual({
          route,
          rawBody,
          status: 422,
          body: { message: 'Validation failed', errors: [{ field: null, message: 'Body must be a JSON object' }] },
        });
      }
    }
    const { token: admin } = await buildUser(app, { role: 'admin' });
    for (const route of withoutBody) {
      const [method, pattern] = route.split(' ');
      const res = await api.rest(method, fill(pattern, '2147483647'), { rawBody: '[1]', token: admin });
      expect({ route, status: res.status === 422 || res.status >= 500 ? res.status : 'ignored' }).toEqual({ route, status: 'ignored' });
    }
  });

  it('bodyObject (the shared body schema helper) rejects non-objects as a whole: field null, 422', () => {
    const schema = bodyObject({ title: text('title', 1, 255) });
    for (const value of [[], [{ title: 'x' }], 'text', 42, true, null, undefined]) {
      let caught: unknown;
      try {
        parseInput(schema, value);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(AppError);
      expect(caught).toMatchObject({ status: 422, message: 'Validation failed', errors: [{ field: null, message: 'Body must be a JSON object' }] });
    }
    expect(parseInput(schema, { title: ' x ', extra: 1 })).toEqual({ title: 'x' });
    expect(() => parseInput(schema, { title: 'a\u0000b' })).toThrow(
      expect.objectContaining({ status: 422, errors: [{ field: 'title', message: 'title must not contain NUL characters' }] }),
    );
  });
});

describe('REST odd requests', () => {
  it('a body of another content type is no body: never parsed as JSON, never a 5xx', async () => {
    for (const { method, path } of bodyTargets()) {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml']) {
        const res = await api.rest(method, path, { rawBody: '{"title":"t","body":"b"}', headers: { 'content-type': type } });
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        expect(res.headers.get('content-type')).toMatch(/^application\/(graphql-response\+)?json/);
      }
    }
  });

  it('a JSON body sent without content-type: application/json is told about the header (422, after authentication)', async () => {
    const { token } = await buildUser(app);
    const send = (headers: Record<string, string>, t?: string) =>
      fetch(`${app.url}/posts`, { method: 'POST', body: '{"title":"t","body":"b"}', headers: { ...headers, ...(t ? { authorization: `Bearer ${t}` } : {}) } });
    const none = await send({ 'content-type': '' }, token);
    expect([none.status, await none.json()]).toEqual([422, { message: 'Validation failed', errors: [{ field: null, message: 'Body must be JSON sent with content-type: application/json (got no content-type)' }] }]);
    const plain = await send({ 'content-type': 'text/plain;charset=UTF-8' }, token);
    expect(((await plain.json()) as { errors: unknown }).errors).toEqual([{ field: null, message: 'Body must be JSON sent with content-type: application/json (got content-type: text/plain)' }]);
    expect((await send({ 'content-type': 'text/plain' })).status).toBe(401);
  });

  it('deeply nested JSON within 1 MB is answered like any other body, not a stack overflow', async () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    const deepObject = '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000);
    for (const { method, path } of bodyTargets()) {
      for (const rawBody of [deep, deepObject, `{"query":"query Q($v: Boolean) { me @include(if: $v) { id } }","variables":{"v":${deepObject}}}`]) {
        const res = await api.rest(method, path, { rawBody });
        expect(res.status).toBeGreaterThanOrEqual(200);
        expect(res.status).toBeLessThan(500);
        expect(res.headers.get('content-type')).toMatch(/^application\/(graphql-response\+)?json/);
      }
    }
  });

  it('gzip, deflate and br bodies are inflated; a corrupt or unknown encoding is 400', async () => {
    const doc = Buffer.from(JSON.stringify({ query: '{ __typename }' }));
    for (const [encoding, body] of [['gzip', gzipSync(doc)], ['deflate', deflateSync(doc)], ['br', brotliCompressSync(doc)]] as const) {
      const res = await raw('POST', '/graphql', { body, headers: { 'content-type': 'application/json', 'content-encoding': encoding } });
      expect({ encoding, status: res.status, body: res.body }).toEqual({ encoding, status: 200, body: { data: { __typename: 'Query' } } });
    }
    const corrupt = await raw('POST', '/graphql', { body: Buffer.from('not gzip at all'), headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
    expect({ status: corrupt.status, body: corrupt.body }).toEqual({ status: 400, body: { message: 'Malformed request body' } });
    const unknown = await raw('POST', '/graphql', { body: doc, headers: { 'content-type': 'application/json', 'content-encoding': 'compress' } });
    expect({ status: unknown.status, body: unknown.body }).toEqual({ status: 400, body: { message: 'Unsupported content encoding' } });
    const charset = await raw('POST', '/graphql', { body: doc, headers: { 'content-type': 'application/json; charset=ebcdic' } });
    expect({ status: charset.status, body: charset.body }).toEqual({ status: 400, body: { message: 'Unsupported content encoding' } });
    // A gzip bomb inflates past the limit: 413, not memory exhaustion.
    const bomb = gzipSync(Buffer.from(JSON.stringify({ query: ' '.repeat(5_000_000) })));
    expect(bomb.length).toBeLessThan(100_000);
    const bombed = await raw('POST', '/graphql', { body: bomb, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
    expect({ status: bombed.status, body: bombed.body }).toEqual({ status: 413, body: { message: 'Payload too large' } });
  });

  it('repeated query keys are a 422 on the list query, never a 500', async () => {
    expect(() => listRequestFromQuery({ page: ['1', '2'] })).toThrow(AppError);
    // Asserted on what was thrown, outside any catch: a call that does not throw fails here.
    const err = thrown(() => listRequestFromQuery({ page: ['1', '2'], paginate: ['page', 'cursor'] }));
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ status: 422, message: 'Validation failed' });
    expect((err as AppError).errors!.map((e) => e.field).sort()).toEqual(['page', 'paginate']);
    for (const r of routes.filter((x) => x.method === 'get')) {
      const res = await api.rest('GET', `${fill(r.path)}?page=1&page=2&paginate=page&paginate=cursor&cursor=a&cursor=b&direction=asc&direction=desc&published=1&published=0&author=1&author=2`);
      expect(res.status).toBeLessThan(500);
      expect(typeof res.body.message === 'string' || res.status === 200).toBe(true);
    }
  });

  it('path segments that cannot be %-decoded: unknown paths 404 Not found; a route answers as for any invalid id, never a 500', async () => {
    for (const bad of ['%E0%A4%A', '%', '%zz', '%C0%AF', '%ff']) {
      const res = await api.rest('GET', `/${bad}`);
      expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: { message: 'Not found' } });
    }
    const post = await api.rest('GET', '/posts/%E0%A4%A');
    expect({ status: post.status, body: post.body }).toEqual({ status: 404, body: { message: 'Post not found' } });
    for (const r of routes.filter((x) => x.path.includes(':'))) {
      const opts = r.method === 'get' ? {} : { body: {} };
      const invalid = await api.rest(r.method.toUpperCase(), fill(r.path, '-'), opts);
      expect(invalid.status).toBeGreaterThanOrEqual(400);
      expect(invalid.status).toBeLessThan(500);
      for (const bad of ['%E0%A4%A', '%', '%zz']) {
        const res = await api.rest(r.method.toUpperCase(), fill(r.path, bad), opts);
        expect({ path: r.path, bad, status: res.status, body: res.body }).toEqual({ path: r.path, bad, status: invalid.status, body: invalid.body });
      }
    }
  });

  it('absolute-form request targets: a valid one is read as its path, an invalid host is 400 Malformed URL, and the server lives on', async () => {
    /** One request over a raw socket, as sent: fetch cannot send an absolute-form target. */
    const exchange = (target: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const { port } = new URL(app.url);
        const socket = connect(Number(port), '127.0.0.1', () => socket.write(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
        let data = '';
        socket.on('data', (c) => (data += c));
        socket.on('error', reject);
        socket.on('close', () => resolve({ status: Number(data.split(' ')[1]), body: data.slice(data.indexOf('\r\n\r\n') + 4) }));
      });
    const post = await buildPost(app, (await buildUser(app)).user);
    const ok = await exchange(`http://x/posts/${post.id}`);
    expect([ok.status, JSON.parse(ok.body).id]).toEqual([200, post.id]);
    expect(await exchange('http://[::1/posts')).toEqual({ status: 400, body: JSON.stringify({ message: 'Malformed URL' }) });
    expect((await raw('GET', '/healthz')).status).toBe(200);
  });

  it('very long URLs: a long path is 404, a long query string is read normally, past 16 KB Node answers 431', async () => {
    const longPath = await api.rest('GET', '/' + 'a'.repeat(8000));
    expect({ status: longPath.status, body: longPath.body }).toEqual({ status: 404, body: { message: 'Not found' } });
    const longQuery = await api.rest('GET', '/healthz?x=' + 'a'.repeat(8000));
    expect({ status: longQuery.status, body: longQuery.body }).toEqual({ status: 200, body: { status: 'ok' } });
    const manyKeys = await api.rest('GET', '/auth/me?' + Array.from({ length: 1000 }, (_, i) => `k${i}=${i}`).join('&'));
    expect(manyKeys.status).toBe(401);
    const tooLong = await raw('GET', '/healthz?x=' + 'a'.repeat(20_000));
    expect(tooLong.status).toBe(431);
  });

  it('HEAD answers like GET without a body; HEAD of a path without GET is 405', async () => {
    const h = await raw('HEAD', '/healthz');
    expect(h.status).toBe(200);
    expect(h.text).toBe('');
    expect(h.headers.get('content-type')).toMatch(/^application\/json/);
    const me = await raw('HEAD', '/auth/me');
    expect(me.status).toBe(401);
    expect(me.text).toBe('');
    expect((await raw('HEAD', '/no/such')).status).toBe(404);
    const gqlHead = await raw('HEAD', `/graphql?query=${encodeURIComponent('{ __typename }')}`, { headers: { accept: 'application/json' } });
    expect({ status: gqlHead.status, text: gqlHead.text }).toEqual({ status: 200, text: '' });
    for (const qs of ['', '?query=%7B', `?query=${encodeURIComponent('{ me { id } }')}`]) {
      const [head, get] = await Promise.all(['HEAD', 'GET'].map((m) => raw(m, `/graphql${qs}`, { headers: { accept: 'application/json' } })));
      expect({ qs, status: head.status, text: head.text }).toEqual({ qs, status: get.status, text: '' });
    }
    for (const r of bodyRoutes()) {
      const path = fill(r.path);
      if (routes.some((x) => x.method === 'get' && fill(x.path) === path)) continue;
      const res = await raw('HEAD', path);
      expect({ path, status: res.status }).toEqual({ path, status: 405 });
      expect(res.headers.get('allow')).not.toContain('HEAD');
    }
  });

  it('OPTIONS on a known path → 204 with Allow; on an unknown path → 404', async () => {
    for (const path of new Set([...routes.map((r) => fill(r.path)), '/healthz', '/graphql'])) {
      const res = await raw('OPTIONS', path);
      expect({ path, status: res.status }).toEqual({ path, status: 204 });
      const allow = res.headers.get('allow')!.split(', ');
      for (const r of routes.filter((x) => fill(x.path) === path)) expect(allow).toContain(r.method.toUpperCase());
    }
    expect((await raw('OPTIONS', '/healthz')).headers.get('allow')).toBe('GET, HEAD');
    const unknown = await raw('OPTIONS', '/no/such');
    expect({ status: unknown.status, body: unknown.body }).toEqual({ status: 404, body: { message: 'Not found' } });
  });

  it('unexpected constraint and data errors from PostgreSQL become 422 Validation failed without SQL', async () => {
    const { user } = await buildUser(app);
    const caught: unknown[] = [];
    for (const attrs of [{ email: user.email }, { email: uniqueEmail(), name: 'nul\u0000byte' }]) {
      const em = app.orm.em.fork();
      em.create(User, { name: 'x', role: 'user', password: 'x', emailVerifiedAt: null, ...attrs } as User);
      await em.flush().catch((err) => caught.push(err));
    }
    expect(caught).toHaveLength(2);
    const [unique, nul] = caught.map(toAppError);
    expect(unique).toMatchObject({ status: 422, message: 'Validation failed', errors: [{ field: null, message: 'The request conflicts with existing data' }] });
    expect(nul).toMatchObject({ status: 422, message: 'Validation failed', errors: [{ field: null, message: 'The request contains a value that cannot be stored' }] });
    expect(JSON.stringify([unique, nul].map((e) => e.errors))).not.toMatch(/insert|users|constraint|violates|0x00/i);
  });
});

describe('security headers and CORS', () => {
  it('every API answer carries the API security headers: a CSP that allows nothing, no framing, nosniff', async () => {
    for (const res of [await raw('GET', '/healthz'), await raw('GET', '/no/such'), await raw('POST', '/graphql', { body: '{', headers: { 'content-type': 'application/json' } }), await raw('GET', '/posts')]) {
      expect(Object.fromEntries(['content-security-policy', 'cross-origin-resource-policy', 'referrer-policy', 'strict-transport-security', 'x-content-type-options', 'x-frame-options'].map((h) => [h, res.headers.get(h)]))).toEqual({
        'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
        'cross-origin-resource-policy': 'same-origin',
        'referrer-policy': 'no-referrer',
        'strict-transport-security': 'max-age=31536000; includeSubDomains',
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'DENY',
      });
      expect(res.headers.get('x-powered-by')).toBeNull();
      // Helmet's document-only headers are the pages' (below), not an API answer's.
      expect(res.headers.get('cross-origin-opener-policy')).toBeNull();
    }
  });

  it('the pages (Swagger UI, GraphiQL) and their files carry helmet\'s document headers with a CSP that loads nothing remote', async () => {
    const html = { headers: { accept: 'text/html' } };
    for (const res of [await raw('GET', '/docs', html), await raw('GET', '/graphql', html), await raw('GET', '/docs/assets/init.js')]) {
      expect(res.status).toBe(200);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('cross-origin-opener-policy')).toBe('same-origin');
      expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self';");
      expect(csp).toContain("worker-src 'self';");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toMatch(/https?:|\*|blob:|unsafe-eval/);
    }
  });

  it('GraphQL answers are not cached (no-store) over POST, with errors, or with Authorization or X-Tenant-Id; only an anonymous query by GET is public (CONTRACT 16)', async () => {
    const json = { 'content-type': 'application/json' };
    const { token } = await buildUser(app);
    const me = `/graphql?query=${encodeURIComponent('{ me { id } }')}`;
    for (const res of [
      await raw('POST', '/graphql', { body: JSON.stringify({ query: '{ posts { total } }' }), headers: json }),
      await raw('POST', '/graphql', { body: JSON.stringify({ query: '{ post(id: 999999) { id } }' }), headers: json }),
      await raw('GET', `/graphql?query=${encodeURIComponent('{ post(id: 999999) { id } }')}`, { headers: { accept: 'application/json' } }),
      await raw('GET', me, { headers: { accept: 'application/json', authorization: `Bearer ${token}` } }),
      await raw('GET', me, { headers: { accept: 'application/json', 'x-tenant-id': '1' } }),
    ]) {
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('etag')).toBeNull();
    }
    const anonymous = await raw('GET', me, { headers: { accept: 'application/json' } });
    expect({ status: anonymous.status, body: anonymous.body, cacheControl: anonymous.headers.get('cache-control') }).toEqual({ status: 200, body: { data: { me: null } }, cacheControl: 'public, no-cache' });
    expect(anonymous.headers.get('etag')).toMatch(/^"[\w-]+"$/);
  });

  it('with no CORS_ORIGINS, no cross-origin access: no Access-Control headers, even on a preflight', async () => {
    const origin = 'https://evil.example';
    const pre = await raw('OPTIONS', '/auth/me', { headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' } });
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    const get = await raw('GET', '/healthz', { headers: { origin } });
    expect(get.status).toBe(200);
    expect(get.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('with CORS_ORIGINS, only the listed origins, preflight answered before the 405 check', async () => {
    const corsApp = await startTestApp({ CORS_ORIGINS: 'https://app.example, https://admin.example' });
    try {
      const call = (method: string, path: string, headers: Record<string, string>) =>
        fetch(corsApp.url + path, { method, headers }).then(async (r) => ({ status: r.status, headers: r.headers, text: await r.text() }));
      for (const path of ['/auth/me', '/graphql', ...bodyRoutes().map((r) => fill(r.path))]) {
        const pre = await call('OPTIONS', path, { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, x-tenant-id' });
        expect({ path, status: pre.status }).toEqual({ path, status: 204 });
        expect(pre.headers.get('access-control-allow-origin')).toBe('https://app.example');
        expect(pre.headers.get('access-control-allow-methods')).toContain('PATCH');
        expect(pre.headers.get('access-control-allow-headers')!.toLowerCase()).toContain('authorization');
        expect(pre.headers.get('access-control-allow-headers')!.toLowerCase()).toContain('x-tenant-id');
        expect(pre.headers.get('access-control-allow-headers')!.toLowerCase()).toContain('if-none-match');
        expect(pre.headers.get('access-control-allow-credentials')).toBeNull();
      }
      const other = await call('OPTIONS', '/auth/me', { origin: 'https://evil.example', 'access-control-request-method': 'GET' });
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
      const listed = await call('GET', '/auth/me', { origin: 'https://admin.example' });
      expect(listed.status).toBe(401);
      expect(listed.headers.get('access-control-allow-origin')).toBe('https://admin.example');
      expect(listed.headers.get('vary')).toMatch(/origin/i);
      expect(listed.headers.get('access-control-expose-headers')).toMatch(/\bETag\b/);
      // A public read keeps CORS's Vary: Origin and adds its own.
      const publicRead = await call('GET', '/posts', { origin: 'https://app.example' });
      expect(publicRead.headers.get('vary')).toBe('Origin, Authorization, X-Tenant-Id');
      const unlisted = await call('GET', '/auth/me', { origin: 'https://evil.example' });
      expect(unlisted.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await corsApp.close();
    }
  });
});

describe('GraphQL request errors: JSON, BAD_USER_INPUT, never a 5xx', () => {
  async function post(body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) {
    const res = await raw('POST', '/graphql', { body, headers });
    expect(res.status).toBeLessThan(500);
    expect(res.headers.get('content-type')).toMatch(/^application\/(graphql-response\+)?json/);
    return res;
  }
  const first = (res: { body: any }) => res.body.errors[0];

  it('syntax errors, unknown fields and bad variables answer 200 with BAD_USER_INPUT', async () => {
    const cases: [string, Record<string, unknown> | undefined][] = [
      ['{ me {', undefined],
      ['{ noSuchField }', undefined],
      ['query Q($b: Boolean!) { me @include(if: $b) { id } }', { b: 'yes' }],
      ['query Q($b: Boolean!) { me @include(if: $b) { id } }', {}],
      ['query Q($b: Boolean!) { me @include(if: $b) { id } }', { b: null }],
      ['query Q($b: Boolean!) { me { id } }', { b: true }],
      ['query Q($b: NoSuchType) { me { id } }', {}],
      ['subscription { me { id } }', undefined],
    ];
    for (const [query, variables] of cases) {
      const res = await post(JSON.stringify({ query, variables }));
      expect({ query, status: res.status }).toEqual({ query, status: 200 });
      expect(res.body.data ?? null).toBeNull();
      expect(first(res)).toMatchObject({ message: expect.any(String), extensions: { code: 'BAD_USER_INPUT' } });
      expect(JSON.stringify(res.body)).not.toMatch(/stacktrace|\n\s+at /);
    }
  });

  it('an operationName that names no operation, or several operations without one → BAD_USER_INPUT', async () => {
    for (const body of [{ query: '{ me { id } }', operationName: 'Nope' }, { query: 'query A { me { id } } query B { me { id } }' }]) {
      const res = await post(JSON.stringify(body));
      expect(first(res).extensions.code).toBe('BAD_USER_INPUT');
    }
  });

  it('malformed request envelopes answer JSON with errors[0].message and BAD_USER_INPUT', async () => {
    // Apollo checks the body's shape before its pipeline (400), the presence of a query inside it (200).
    const cases: [string, string, number][] = [
      ['{}', 'POST body missing', 400],
      ['{"variables":{}}', 'non-empty `query`', 200],
      ['{"query": 42}', 'must be strings', 400],
      ['{"query":"{ me { id } }","variables":"{}"}', '`variables`', 400],
      ['{"query":"{ me { id } }","variables":[1]}', '`variables`', 400],
      ['{"query":"{ me { id } }","operationName":5}', '`operationName`', 400],
      ['"just a string"', 'POST body missing', 400],
    ];
    for (const [body, fragment, status] of cases) {
      const res = await post(body);
      expect({ body, status: res.status }).toEqual({ body, status });
      expect(first(res).message).toContain(fragment);
      expect(first(res).extensions.code).toBe('BAD_USER_INPUT');
    }
  });

  it('a POST whose Accept header excludes JSON still gets JSON, before anything runs', async () => {
    for (const accept of ['application/xml', 'text/html', 'garbage', 'image/png;q=1, */*;q=0']) {
      const res = await post(JSON.stringify({ query: '{ __typename }' }), { 'content-type': 'application/json', accept });
      expect({ accept, status: res.status, body: res.body }).toEqual({ accept, status: 200, body: { data: { __typename: 'Query' } } });
    }
  });

  it('a batched array body is refused with a 400 JSON error (batching is off)', async () => {
    const res = await post(JSON.stringify([{ query: '{ me { id } }' }, { query: '{ me { id } }' }]));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ errors: [expect.objectContaining({ message: 'Operation batching disabled.', extensions: { code: 'BAD_USER_INPUT' } })] });
  });

  it('a body that is not JSON at all → 400 JSON, not the adapter plain-text 500', async () => {
    const res = await post('{ me { id } }', { 'content-type': 'text/plain' });
    expect(res.status).toBe(400);
    expect(first(res)).toMatchObject({ message: expect.stringContaining('POST body missing'), extensions: { code: 'BAD_USER_INPUT' } });
    const none = await post('', {});
    expect(none.status).toBe(400);
    expect(first(none).extensions.code).toBe('BAD_USER_INPUT');
  });

  it('GET: queries run; a mutation, a missing or repeated query is refused as JSON', async () => {
    const get = (qs: string) => raw('GET', `/graphql${qs}`, { headers: { accept: 'application/json' } });
    const ok = await get(`?query=${encodeURIComponent('{ me { id } }')}`);
    expect({ status: ok.status, body: ok.body }).toEqual({ status: 200, body: { data: { me: null } } });
    for (const qs of ['', `?query=${encodeURIComponent('mutation { __typename }')}`, '?query=%7B&query=%7D', `?query=${encodeURIComponent('{ me { id } }')}&variables=nope`, '?query=%E0%A4%A']) {
      const res = await get(qs);
      expect(res.status).toBeLessThan(500);
      expect(res.headers.get('content-type')).toMatch(/^application\/(graphql-response\+)?json/);
      expect(res.body.errors[0]).toMatchObject({ message: expect.any(String), extensions: { code: 'BAD_USER_INPUT' } });
    }
  });

  it('CONTRACT 7 precedence on /graphql: 405, 413, 400 Malformed JSON', async () => {
    const put = await api.rest('PUT', '/graphql', { rawBody: '{' });
    expect({ status: put.status, body: put.body, allow: put.headers.get('allow') }).toEqual({ status: 405, body: { message: 'Method not allowed' }, allow: 'GET, HEAD, POST' });
    const huge = await api.rest('POST', '/graphql', { rawBody: HUGE + '{' });
    expect({ status: huge.status, body: huge.body }).toEqual({ status: 413, body: { message: 'Payload too large' } });
    const bad = await api.rest('POST', '/graphql', { rawBody: '{"query":' });
    expect({ status: bad.status, body: bad.body }).toEqual({ status: 400, body: { message: 'Malformed JSON' } });
  });
});

describe('GraphQL depth and cost limits', () => {
  const schema = buildSchema(`
    type Query { node: Node, nodes: [Node!]!, leaf: Int }
    type Node { id: Int, child: Node, children: [Node!]! }
  `);
  const errorsOf = (query: string) => validate(schema, parse(query), limitRules).map((e) => ({ message: e.message, code: e.extensions.code }));
  const nested = (depth: number, field = 'child') => `{ node ${`{ ${field} `.repeat(depth - 2)}{ id }${' }'.repeat(depth - 2)} }`;

  it(`allows depth ${LIMITS.maxDepth}, rejects depth ${LIMITS.maxDepth + 1} with a clear message`, () => {
    expect(errorsOf(nested(LIMITS.maxDepth))).toEqual([]);
    expect(errorsOf(nested(LIMITS.maxDepth + 1))).toEqual([
      { message: `Query is too deep: depth ${LIMITS.maxDepth + 1} exceeds the limit of ${LIMITS.maxDepth}`, code: 'BAD_USER_INPUT' },
    ]);
  });

  it('counts depth through fragments and inline fragments', () => {
    const viaFragments = `{ node { ...A } } fragment A on Node { child { ... on Node { child { ...B } } } } fragment B on Node { child { child { child { child { child { id } } } } } }`;
    expect(errorsOf(viaFragments)[0]?.message).toMatch(/^Query is too deep: depth 9 exceeds/);
  });

  it('multiplies the cost of lists and rejects what would fan out too far', () => {
    // nodes → children → children: 10 × 10 × 10 leaves is within budget; one more level is not.
    expect(errorsOf('{ nodes { children { children { id } } } }')).toEqual([]);
    expect(errorsOf('{ nodes { children { children { children { id } } } } }')).toEqual([
      { message: `Query is too complex: estimated cost exceeds the limit of ${LIMITS.maxCost}`, code: 'BAD_USER_INPUT' },
    ]);
  });

  it('prices aliases and repeated fragment spreads, which a naive count would miss', () => {
    const aliases = Array.from({ length: 150 }, (_, i) => `a${i}: nodes { id child { id } }`).join(' ');
    expect(errorsOf(`{ ${aliases} }`)[0]?.message).toMatch(/too complex/);
    const f0 = Array.from({ length: 10 }, (_, i) => `x${i}: leaf`).join(' ');
    const spreads = (name: string) => Array.from({ length: 10 }, () => `...${name}`).join(' ');
    expect(errorsOf(`{ ...F3 } fragment F0 on Query { ${f0} } fragment F1 on Query { ${spreads('F0')} } fragment F2 on Query { ${spreads('F1')} } fragment F3 on Query { ${spreads('F2')} }`)[0]?.message).toMatch(/too complex/);
  });

  it('a document of fragments spread into fragments is too complex, however little it selects', () => {
    // 40 fragments, each spreading the next twice: 2^40 selections if walked naively (the walk
    // once did, and validation ran for hours); graphql-js itself merges them into one `__typename`.
    const fragments = Array.from({ length: 40 }, (_, i) => `fragment F${i} on Query { __typename ...F${i + 1} ...F${i + 1} }`).join(' ');
    expect(errorsOf(`{ ...F0 } ${fragments} fragment F40 on Query { __typename }`)).toEqual([
      { message: `Query is too complex: estimated cost exceeds the limit of ${LIMITS.maxCost}`, code: 'BAD_USER_INPUT' },
    ]);
  });

  it('ignores introspection fields, so the IDE introspection query passes', () => {
    const deepIntrospection = '{ __schema { types { fields { type { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } } }';
    expect(errorsOf(deepIntrospection)).toEqual([]);
  });

  it('are applied by the server: an over-budget query answers 200 with BAD_USER_INPUT and runs nothing', async () => {
    const f0 = Array.from({ length: 10 }, (_, i) => `x${i}: me { id }`).join(' ');
    const spreads = (name: string) => Array.from({ length: 10 }, () => `...${name}`).join(' ');
    const query = `{ ...F3 } fragment F0 on Query { ${f0} } fragment F1 on Query { ${spreads('F0')} } fragment F2 on Query { ${spreads('F1')} } fragment F3 on Query { ${spreads('F2')} }`;
    const { token } = await buildUser(app);
    app.sql.length = 0;
    const res = await api.gql(query, undefined, { token });
    expect(res.status).toBe(200);
    expect(res.data ?? null).toBeNull();
    // 10 aliases in a fragment spread 1000 times: over the alias limit as well (CONTRACT 12).
    expect(res.errors).toEqual([
      expect.objectContaining({ message: `Query is too complex: estimated cost exceeds the limit of ${LIMITS.maxCost}`, extensions: { code: 'BAD_USER_INPUT' } }),
      expect.objectContaining({ message: `Too many aliases: a document may use at most ${LIMITS.maxAliases}`, extensions: { code: 'BAD_USER_INPUT' } }),
    ]);
    // Running `me` with a token would load the user; background jobs may log statements of their own.
    expect(app.sql.filter((q) => /"users"/.test(q))).toEqual([]);
  });

  it('a document with too many tokens is refused before validation', async () => {
    const query = `{ ${Array.from({ length: 3000 }, (_, i) => `a${i}: __typename`).join(' ')} }`;
    const res = await api.gql(query);
    expect(res.status).toBe(200);
    expect(res.errors?.[0]).toMatchObject({ message: expect.stringMatching(/tokens/), extensions: { code: 'BAD_USER_INPUT' } });
  });
});

describe('production GraphQL', () => {
  it('refuses introspection and suggests no field names; HEAD /graphql is not a 5xx', async () => {
    const prod = await startTestApp({ NODE_ENV: 'production', SMTP_URL: 'smtp://127.0.0.1:1', APP_URL: 'http://app.test' });
    try {
      const p = clients(prod.url);
      const intro = await p.gql('{ __schema { types { name } } }');
      expect(intro.status).toBe(200);
      expect(intro.errors?.[0]).toMatchObject({ message: expect.stringMatching(/introspection/i), extensions: { code: 'BAD_USER_INPUT' } });
      const typo = await p.gql('{ mee { id } }');
      expect(typo.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
      expect(typo.errors?.[0].message).not.toMatch(/Did you mean/);
      const head = await fetch(prod.url + '/graphql', { method: 'HEAD' });
      expect(head.status).toBeLessThan(500);
    } finally {
      await prod.close();
    }
  });
});
