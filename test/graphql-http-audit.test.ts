import { serverAudits, type AuditResult } from 'graphql-http';
import { startTestApp, type TestApp } from './support/harness';

/**
 * The GraphQL-over-HTTP specification's own audit suite (graphql-http's `serverAudits`), run
 * against the running service's /graphql: every MUST and every SHOULD passes (CONTRACT 12).
 *
 * The MAYs that are not taken, and why: each sends its request with NO Accept header, where the
 * service answers as application/json, and under application/json every GraphQL answer is HTTP
 * 200 with `errors` (CONTRACT 12, as clients built before graphql-response+json expect):
 * - "MAY use 400 status code on number {query} parameter" (no Accept)
 * - "MAY use 400 status code on boolean {query} parameter" (no Accept)
 * - "MAY use 4xx or 5xx status codes if parameters are invalid" (no Accept, `qeury` typo)
 * - "MAY use 400 status code if parameters are invalid" (the same request)
 * The same requests sent with `Accept: application/graphql-response+json` answer 400 (below).
 */
const ALLOWED_MAY_NOTICES = [
  'MAY use 400 status code on number {query} parameter',
  'MAY use 400 status code on boolean {query} parameter',
  'MAY use 4xx or 5xx status codes if parameters are invalid',
  'MAY use 400 status code if parameters are invalid',
];

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

it('graphql-http serverAudits: every MUST and SHOULD passes; the MAYs not taken are the listed ones', async () => {
  const results: AuditResult[] = [];
  for (const audit of serverAudits({ url: () => `${app.url}/graphql` })) results.push(await audit.fn());
  expect(results.length).toBeGreaterThan(50);
  const failed = results.filter((r) => r.status !== 'ok');
  const required = failed.filter((r) => !r.name.startsWith('MAY')).map((r) => `${r.status} ${r.name}: ${'reason' in r ? r.reason : ''}`);
  expect(required).toEqual([]);
  expect(failed.map((r) => r.name).sort()).toEqual([...ALLOWED_MAY_NOTICES].sort());
  expect(results.filter((r) => r.name.startsWith('MUST')).length).toBeGreaterThan(10);
  expect(results.filter((r) => r.name.startsWith('SHOULD')).length).toBeGreaterThan(10);
});

it('the MAYs not taken under application/json answer 400 under application/graphql-response+json', async () => {
  for (const body of [{ query: 0 }, { query: false }, { qeury: '{ __typename }' }]) {
    const res = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify(body),
    });
    expect({ body, status: res.status, type: res.headers.get('content-type') }).toEqual({ body, status: 400, type: 'application/graphql-response+json; charset=utf-8' });
    const json = (await res.json()) as Record<string, unknown>;
    expect(json).not.toHaveProperty('data');
    expect(json.errors).toEqual([expect.objectContaining({ message: expect.any(String), extensions: { code: 'BAD_USER_INPUT' } })]);
  }
});

describe('application/graphql-response+json: request errors 4xx without data, execution errors 200', () => {
  const GQL = 'application/graphql-response+json';
  async function send(o: { method?: string; body?: string; qs?: string; accept?: string; headers?: Record<string, string> }) {
    const res = await fetch(`${app.url}/graphql${o.qs ?? ''}`, {
      method: o.method ?? 'POST',
      headers: { ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}), ...(o.accept ? { accept: o.accept } : {}), ...o.headers },
      body: o.body,
    });
    const text = await res.text();
    return { status: res.status, type: res.headers.get('content-type'), cacheControl: res.headers.get('cache-control'), allow: res.headers.get('allow'), json: JSON.parse(text) as { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] } };
  }
  const post = (query: unknown, variables?: unknown, accept = GQL) => send({ body: JSON.stringify({ query, variables }), accept });

  const requestErrors: [string, () => ReturnType<typeof send>][] = [
    ['a document that does not parse', () => post('{ me {')],
    ['a document that does not validate', () => post('{ noSuchField }')],
    ['variables that do not coerce', () => post('query Q($b: Boolean!) { me @include(if: $b) { id } }', { b: 'yes' })],
    ['a required variable missing', () => post('query Q($b: Boolean!) { me @include(if: $b) { id } }', {})],
    ['no document', () => send({ body: JSON.stringify({ variables: {} }), accept: GQL })],
    ['no document by GET', () => send({ method: 'GET', accept: GQL })],
    ['an empty body', () => send({ body: '', accept: GQL })],
    ['a body that is not JSON', () => send({ body: '{"query":', accept: GQL })],
    ['a document over the alias limit', () => post(`{ ${Array.from({ length: 31 }, (_, i) => `a${i}: __typename`).join(' ')} }`)],
    ['a subscription over HTTP', () => post('subscription { postPublished { id } }')],
  ];
  it.each(requestErrors)('%s: 400, that media type, errors and no data; 200 under application/json', async (_name, request) => {
    const res = await request();
    expect({ status: res.status, type: res.type, cacheControl: res.cacheControl }).toEqual({ status: 400, type: `${GQL}; charset=utf-8`, cacheControl: 'no-store' });
    expect(res.json).not.toHaveProperty('data');
    expect(res.json.errors?.[0]).toMatchObject({ message: expect.any(String), extensions: { code: 'BAD_USER_INPUT' } });
  });

  it('the same requests under application/json keep their answers: 200 with errors, and the REST 400s for a body', async () => {
    expect((await post('{ me {', undefined, 'application/json')).status).toBe(200);
    expect((await post('{ noSuchField }', undefined, 'application/json')).status).toBe(200);
    expect((await post('query Q($b: Boolean!) { me @include(if: $b) { id } }', { b: 'yes' }, 'application/json')).status).toBe(200);
    expect((await send({ body: JSON.stringify({ variables: {} }) })).status).toBe(200);
    const malformed = await send({ body: '{"query":', accept: 'application/json' });
    expect({ status: malformed.status, json: malformed.json }).toEqual({ status: 400, json: { message: 'Malformed JSON' } });
  });

  it('a body over 1 MB is 413 with GraphQL errors; a mutation by GET is 405 with Allow: POST', async () => {
    const huge = await send({ body: JSON.stringify({ query: `{ me { id } }${' '.repeat(1_100_000)}` }), accept: GQL });
    expect({ status: huge.status, type: huge.type, json: huge.json }).toEqual({ status: 413, type: `${GQL}; charset=utf-8`, json: { errors: [{ message: 'Payload too large', extensions: { code: 'BAD_USER_INPUT' } }] } });
    const mutation = await send({ method: 'GET', qs: `?query=${encodeURIComponent('mutation { forgotPassword(email: "a@b.test") { message } }')}`, accept: GQL });
    expect({ status: mutation.status, allow: mutation.allow }).toEqual({ status: 405, allow: 'POST' });
    expect(mutation.json).not.toHaveProperty('data');
  });

  it('an error raised while executing keeps 200 with data (null where it failed)', async () => {
    const res = await post('{ post(id: 999999) { id } }');
    expect({ status: res.status, type: res.type }).toEqual({ status: 200, type: `${GQL}; charset=utf-8` });
    expect(res.json).toEqual({ data: { post: null }, errors: [expect.objectContaining({ message: 'Post not found', extensions: { code: 'NOT_FOUND' } })] });
    const unauthenticated = await post('mutation { createPost(title: "t", body: "b") { id } }');
    expect(unauthenticated.status).toBe(200);
    expect(unauthenticated.json.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
    expect(unauthenticated.json).toHaveProperty('data', null);
  });

  it('the media type follows Accept as Apollo weighs it: preferred or only acceptable → graphql-response+json; */* or none → application/json', async () => {
    for (const [accept, type] of [
      [GQL, GQL],
      [`${GQL}, application/json;q=0.9`, GQL],
      [`application/json;q=0.5, ${GQL}`, GQL],
      ['application/json', 'application/json'],
      [`application/json, ${GQL};q=0.9`, 'application/json'],
      ['*/*', 'application/json'],
      [undefined, 'application/json'],
    ] as const) {
      const res = await send({ body: JSON.stringify({ query: '{ me {' }), accept });
      expect({ accept, type: res.type, status: res.status }).toEqual({ accept, type: `${type}; charset=utf-8`, status: type === GQL ? 400 : 200 });
    }
  });
});
