import { randomBytes } from 'node:crypto';
import { GraphQLError } from 'graphql';
import { Client } from 'pg';
import { startTestApp, type TestApp } from './support/harness';
import { reply } from '../src/http/routes';
import { clients, rest } from './support/client';
import { buildUser } from './support/factories';
import { createPinoLogger, wantsPrettyLogs } from '../src/core/logger';
import { until } from './support/wait';

/** Log lines captured in memory: the real pino logger, writing to an array. */
const lines: string[] = [];
const log = createPinoLogger({ level: 'debug', stream: { write: (s: string) => void lines.push(s) } });
const parsed = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

/** The request line is written when the response closes, which can be just after the client has it. */
function logLineFor(requestIdValue: string): Promise<Record<string, unknown>> {
  return until(() => parsed().find((l) => l.requestId === requestIdValue && l.msg === 'request'), `the log line of request ${requestIdValue}`, { everyMs: 10 });
}

const ASSET_URL = /(?:src|href)="([^"]+)"/g;
// A `data:` URL (GraphiQL's empty icon) loads nothing from anywhere.
const localAssets = (html: string) => [...html.matchAll(ASSET_URL)].map((m) => m[1]).filter((u) => !u.startsWith('data:'));

let app: TestApp;
let api: ReturnType<typeof clients>;

beforeAll(async () => {
  app = await startTestApp({}, { log });
  api = clients(app.url);
});
afterAll(() => app.close());

describe('request ids', () => {
  it('generates one when none is sent, and echoes a sane incoming one', async () => {
    const generated = await api.rest('GET', '/healthz');
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const other = await api.rest('GET', '/healthz');
    expect(other.headers.get('x-request-id')).not.toBe(generated.headers.get('x-request-id'));

    const echoed = await api.rest('GET', '/healthz', { headers: { 'x-request-id': 'gateway-trace.42:abc' } });
    expect(echoed.headers.get('x-request-id')).toBe('gateway-trace.42:abc');
  });

  it('replaces an incoming id that is not sane (too long, odd characters)', async () => {
    for (const bad of ['x'.repeat(200), 'has space', '<script>', '"quoted"']) {
      const res = await api.rest('GET', '/healthz', { headers: { 'x-request-id': bad } });
      expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('404s and 405s carry one too', async () => {
    expect((await api.rest('GET', '/nowhere')).headers.get('x-request-id')).toBeTruthy();
    expect((await api.rest('PUT', '/healthz')).headers.get('x-request-id')).toBeTruthy();
  });

  it('RequestContext.requestId is the same id, for a route a team adds through `extend`', async () => {
    // A probe route mounted the way a team adds its own (createApp's `extend`), behind the real chain.
    const probe = await startTestApp({}, {
      app: { extend: (express, kit) => express.use(kit.routes([{ method: 'get', path: '/probe', handler: async (_req, ctx) => reply({ requestId: ctx.requestId }) }])) },
    });
    try {
      const res = await fetch(`${probe.url}/probe`, { headers: { 'x-request-id': 'abc-123' } });
      expect(await res.json()).toEqual({ requestId: 'abc-123' });
      const res2 = await fetch(`${probe.url}/probe`);
      expect(await res2.json()).toEqual({ requestId: res2.headers.get('x-request-id') });
      expect((await fetch(`${probe.url}/probe`, { method: 'POST' })).status).toBe(405);
    } finally {
      await probe.close();
    }
  });
});

describe('structured logs', () => {
  it('one JSON line per request with method, route pattern, status, duration and request id', async () => {
    await api.rest('GET', '/healthz', { headers: { 'x-request-id': 'log-line-1' } });
    const line = await logLineFor('log-line-1');
    expect(line).toMatchObject({ level: 30, msg: 'request', method: 'GET', route: '/healthz', path: '/healthz', status: 200, durationMs: expect.any(Number) });
    expect(line.time).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
    expect(line).not.toHaveProperty('operation');
  });

  it('never shows the bearer token', async () => {
    const { token } = await buildUser(app);
    const res = await api.rest('GET', '/auth/me', { token, headers: { 'x-request-id': 'log-me' } });
    expect(res.status).toBe(200);
    const line = await logLineFor('log-me');
    expect(line).toMatchObject({ route: '/auth/me', status: 200 });
    expect(lines.join('')).not.toContain(token);
    expect(lines.join('')).not.toContain(token.split('.')[2]);
  });

  it('logs the verify-email path with the token cut out, whatever the answer', async () => {
    const secret = 'eyJhbGciOiJIUzI1NiJ9.SECRETPAYLOAD.SECRETSIGNATURE';
    const res = await api.rest('POST', `/auth/verify-email/${secret}`, { headers: { 'x-request-id': 'log-verify' } });
    expect(res.status).not.toBe(500);
    const line = await logLineFor('log-verify');
    expect(line.path).toBe('/auth/verify-email/[REDACTED]');
    expect(lines.join('')).not.toContain('SECRET');
  });

  it('GraphQL: route and path /graphql, the operation name, type and root fields; never variables', async () => {
    const { user, password } = await buildUser(app);
    const res = await api.gql('mutation SignIn($email: String!, $password: String!) { login(email: $email, password: $password) { token } }', { email: user.email, password }, { headers: { 'x-request-id': 'log-gql-post' } });
    expect(res.data?.login.token).toEqual(expect.any(String));
    const line = await logLineFor('log-gql-post');
    expect(line).toMatchObject({ method: 'POST', route: '/graphql', path: '/graphql', status: 200, operation: 'SignIn', operationType: 'mutation', rootFields: ['login'] });
    expect(lines.join('')).not.toContain(user.email);
    expect(lines.join('')).not.toContain(res.data?.login.token);
  });

  it('GraphQL over GET, anonymous: operation null, root fields by schema name (not alias), no query string', async () => {
    const q = encodeURIComponent('{ mine: me { id } __typename ...P } fragment P on Query { posts { total } }');
    const res = await fetch(`${app.url}/graphql?query=${q}`, { headers: { 'x-request-id': 'log-gql-get' } });
    expect(res.status).toBe(200);
    const line = await logLineFor('log-gql-get');
    expect(line).toMatchObject({ method: 'GET', route: '/graphql', path: '/graphql', status: 200, operation: null, operationType: 'query', rootFields: ['me', '__typename', 'posts'] });
    expect(JSON.stringify(line)).not.toContain('mine');
  });

  it('GraphQL refused before execution still names its operation; unparsable text names none', async () => {
    const aliases = Array.from({ length: 31 }, (_, i) => `a${i}: __typename`).join(' ');
    const refused = await api.gql(`query TooWide { ${aliases} }`, undefined, { headers: { 'x-request-id': 'log-gql-refused' } });
    expect(refused.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    expect(await logLineFor('log-gql-refused')).toMatchObject({ route: '/graphql', operation: 'TooWide', operationType: 'query', rootFields: ['__typename'] });
    await api.gql('query Broken {', undefined, { headers: { 'x-request-id': 'log-gql-unparsable' } });
    expect(await logLineFor('log-gql-unparsable')).toMatchObject({ route: '/graphql', operation: null, operationType: null, rootFields: null });
  });

  it('redacts passwords, tokens and authorization headers handed to the logger', () => {
    const before = lines.length;
    log.info({ password: 'hunter2-password', token: 'tok-123456', headers: { authorization: 'Bearer abc.def.ghi' }, input: { password: 'nested-pw', token: 'nested-tok' } }, 'careless');
    const out = lines.slice(before).join('');
    for (const secret of ['hunter2-password', 'tok-123456', 'abc.def.ghi', 'nested-pw', 'nested-tok']) expect(out).not.toContain(secret);
    expect(out).toContain('[REDACTED]');
  });

  it('pretty lines only in development on a terminal', () => {
    expect(wantsPrettyLogs('development', true)).toBe(true);
    expect(wantsPrettyLogs('development', false)).toBe(false);
    expect(wantsPrettyLogs('production', true)).toBe(false);
    expect(wantsPrettyLogs('test', true)).toBe(false);
  });
});

describe('database errors in logs', () => {
  /** The err objects of the lines written since `before`. */
  const errsSince = (before: number) => lines.slice(before).map((l) => (JSON.parse(l) as { err?: Record<string, unknown> }).err).filter(Boolean);
  const failing = (sql: string, params: unknown[]) => app.orm.em.fork().execute(sql, params as never[]).then(() => { throw new Error('the query did not fail'); }, (e: unknown) => e);

  it('show class, SQLSTATE, constraint and table and the driver message, never the SQL or its values', async () => {
    const secret = randomBytes(32).toString('hex');
    const { user } = await buildUser(app);
    const tooLong = await failing('insert into password_reset_tokens (email, token) values (?, ?)', ['someone@example.test', `${secret}${secret}`]);
    // PostgreSQL's detail names the duplicate value: "Key (email)=(...) already exists."
    const duplicate = await failing('insert into users (created_at, updated_at, name, email, password) values (now(), now(), ?, ?, ?)', ['Dup', user.email, `$2b$04$${secret}`]);
    // Here the driver's own message quotes the value: invalid input syntax for type integer: "...".
    // A letter first: hex that starts with ten digits overflows before PostgreSQL reaches a letter (22003, not 22P02).
    const badInt = await failing('select ?::int as n', [`x${secret}`]);
    const before = lines.length;
    log.error({ err: tooLong }, 'request failed');
    log.error({ err: duplicate }, 'request failed');
    log.error({ err: badInt }, 'request failed');
    // As graphql/errors.ts may hand it over: a GraphQLError whose message is the database error's.
    log.error({ err: new GraphQLError((duplicate as Error).message, { originalError: duplicate as Error }) }, 'resolver failed');
    const out = lines.slice(before).join('');
    expect(out).not.toContain(secret);
    expect(out).not.toContain(user.email);
    expect(out).not.toMatch(/insert into|select \?|::int/i);
    const [a, b, c, d] = errsSince(before);
    const frames = expect.stringMatching(/^\s+at /);
    expect(a).toEqual({ type: 'DriverException', code: '22001', message: 'value too long for type character varying(64)', stack: frames });
    expect(b).toEqual({
      type: 'UniqueConstraintViolationException', code: '23505', constraint: 'users_email_unique', table: 'users',
      message: 'duplicate key value violates unique constraint "users_email_unique"', stack: frames,
    });
    expect(c).toEqual({ type: 'DriverException', code: '22P02', message: 'invalid input syntax for type integer: "?"', stack: frames });
    expect(d).toEqual({ ...b, wrappedIn: ['GraphQLError'] });
  });

  it('a failed outbox insert behind a 500 is logged without the mail it carried', async () => {
    const { user } = await buildUser(app);
    const em = app.orm.em.fork();
    await em.execute(`create function refuse_mail() returns trigger language plpgsql as $$ begin raise exception 'outbox refused'; end $$`);
    await em.execute('create trigger refuse_mail before insert on mail_outbox for each row execute function refuse_mail()');
    try {
      const before = lines.length;
      // Unchecked: the OpenAPI document rightly lists no 500.
      const res = await rest(app.url, 'POST', '/auth/forgot-password', { body: { email: user.email }, headers: { 'x-request-id': 'log-outbox-failure' } });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ message: 'Internal server error' });
      const out = lines.slice(before).join('');
      expect(out).not.toMatch(/[0-9a-f]{64}/);
      expect(out).not.toContain('reset-password#token');
      expect(out).not.toContain(user.email);
      const failed = parsed().slice(before).find((l) => l.msg === 'request failed' && l.requestId === 'log-outbox-failure');
      expect(failed?.err).toMatchObject({ code: 'P0001', message: 'outbox refused' });
    } finally {
      await em.execute('drop trigger refuse_mail on mail_outbox');
      await em.execute('drop function refuse_mail()');
    }
  });

  it('other errors keep their message and stack', () => {
    const before = lines.length;
    log.error({ err: new TypeError('plain failure') }, 'request failed');
    const [err] = errsSince(before);
    expect(err).toMatchObject({ type: 'TypeError', message: 'plain failure', stack: expect.stringContaining('TypeError: plain failure\n    at ') });
  });
});

describe('GET /metrics', () => {
  it('exposes HTTP metrics by route pattern, GraphQL operations by name and outcome, the pool and the process', async () => {
    await api.rest('GET', '/healthz');
    await api.rest('GET', '/healthz');
    await api.rest('GET', '/no/such/thing-123');
    await api.rest('POST', '/auth/verify-email/TOKENINPATH');
    const ok = await api.gql('query WhoAmI { me { id } }');
    expect(ok.errors).toBeUndefined();
    const failed = await api.gql('query WhoAmIBroken { me { id } }', undefined, { token: 'not-a-jwt' });
    expect(failed.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
    const overGet = await fetch(`${app.url}/graphql?query=${encodeURIComponent('query WhoAmIOverGet { me { id } }')}`);
    expect(overGet.status).toBe(200);

    const res = await fetch(`${app.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    const value = (series: string) => {
      const line = text.split('\n').find((l) => l.startsWith(series + ' '));
      return line ? Number(line.slice(series.length + 1)) : undefined;
    };
    expect(value('http_requests_total{method="GET",route="/healthz",status_code="200"}')).toBeGreaterThanOrEqual(2);
    expect(value('http_requests_total{method="GET",route="unmatched",status_code="404"}')).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/healthz",status_code="200"\}/);
    // Route patterns, never raw paths: no ids or tokens in label values.
    expect(text).not.toContain('thing-123');
    expect(text).not.toContain('TOKENINPATH');
    // GraphQL is mounted under /graphql: its requests are counted there, not as unmatched 404s.
    expect(value('http_requests_total{method="POST",route="/graphql",status_code="200"}')).toBeGreaterThanOrEqual(2);
    expect(value('http_requests_total{method="GET",route="/graphql",status_code="200"}')).toBeGreaterThanOrEqual(1);
    expect(text).not.toMatch(/route="unmatched",status_code="200"/);

    expect(value('graphql_operations_total{operation_name="WhoAmI",operation_type="query",outcome="success"}')).toBe(1);
    expect(value('graphql_operations_total{operation_name="WhoAmIBroken",operation_type="query",outcome="error"}')).toBe(1);
    expect(value('graphql_operations_total{operation_name="WhoAmIOverGet",operation_type="query",outcome="success"}')).toBe(1);
    expect(text).toContain('graphql_operation_duration_seconds_count{operation_name="WhoAmI",operation_type="query",outcome="success"} 1');

    for (const state of ['active', 'idle', 'idle_in_transaction', 'idle_in_transaction_aborted']) expect(value(`db_pool_connections{state="${state}"}`)).toEqual(expect.any(Number));
    // Named statements that had to run unnamed (test/named-statements.test.ts makes them happen).
    for (const reason of ['missing', 'duplicate', 'invalidated']) expect(value(`db_named_statement_fallbacks_total{reason="${reason}"}`)).toBe(0);
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('nodejs_eventloop_lag_seconds');
  });

  it('db_pool_connections counts this process\'s connections as PostgreSQL sees them (pg_stat_activity by application_name)', async () => {
    const gauge = async (state: string) => {
      const text = (await api.rest('GET', '/metrics')).text;
      return Number(new RegExp(`^db_pool_connections\\{state="${state}"\\} (\\d+)$`, 'm').exec(text)?.[1]);
    };
    // The background jobs open short transactions of their own: a count is taken as settled once seen.
    // The last count seen is returned either way, so that a miss shows the count in the expectation.
    const settles = async (state: string, settled: (n: number) => boolean) => {
      let seen = NaN;
      await until(async () => settled((seen = await gauge(state))), `db_pool_connections{state="${state}"} to settle`, { ms: 10_000 }).catch(() => undefined);
      return seen;
    };
    const settlesAt = (state: string, expected: number) => settles(state, (n) => n === expected);
    // Two of the pool's connections held inside transactions, and one of another program, which is not counted.
    const held = [app.orm.em.fork(), app.orm.em.fork()];
    const other = new Client({ connectionString: app.databaseUrl, application_name: 'someone-else' });
    await other.connect();
    try {
      await other.query('begin');
      for (const em of held) {
        await em.begin();
        await em.execute('select 1');
      }
      expect(await settlesAt('idle_in_transaction', 2)).toBe(2);
    } finally {
      for (const em of held) await em.rollback();
      await other.end();
    }
    expect(await settlesAt('idle_in_transaction', 0)).toBe(0);
    // A job may hold one of the two for a moment after the rollbacks.
    expect(await settles('idle', (n) => n >= 2)).toBeGreaterThanOrEqual(2);
  });
});

describe('documentation and the IDE (development)', () => {
  it('GET /docs is Swagger UI from local assets only', async () => {
    const res = await api.rest('GET', '/docs', { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.text).not.toMatch(/https?:\/\//);
    const assets = localAssets(res.text);
    expect(assets).toEqual(expect.arrayContaining(['/docs/assets/swagger-ui.css', '/docs/assets/swagger-ui-bundle.js', '/docs/assets/init.js']));
    for (const a of assets) {
      expect(a.startsWith('/')).toBe(true);
      const asset = await fetch(app.url + a);
      expect({ a, status: asset.status }).toEqual({ a, status: 200 });
    }
    const init = await (await fetch(`${app.url}/docs/assets/init.js`)).text();
    expect(init).toContain("url: '/openapi.json'");
    expect(init).toContain('validatorUrl: null');
    expect((await api.rest('GET', '/docs/assets/../../package.json')).status).toBe(404);
    expect((await api.rest('GET', '/docs/assets/index.html')).status).toBe(404);
  });

  it('GET /graphql from a browser is GraphiQL, from local assets only', async () => {
    const res = await api.rest('GET', '/graphql', { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.text).not.toMatch(/https?:\/\//);
    const assets = localAssets(res.text);
    expect(assets).toEqual(
      expect.arrayContaining([
        '/graphql/assets/ide.js',
        '/graphql/assets/ide.css',
      ]),
    );
    // Each body read to its end: an unread answer keeps its connection (and this worker) open after the app closes.
    const get = async (path: string) => {
      const res = await fetch(app.url + path);
      await res.arrayBuffer();
      return res;
    };
    for (const a of assets) {
      const asset = await get(a);
      expect({ a, status: asset.status }).toEqual({ a, status: 200 });
    }
    // Monaco's workers are started by the script, not named by the page.
    for (const w of ['editor', 'json', 'graphql']) expect((await get(`/graphql/assets/${w}.worker.js`)).status).toBe(200);
    expect((await api.rest('GET', '/graphql/assets/nope.js')).status).toBe(404);
  });

  it('a GET with a query, or without text/html, is still a GraphQL request', async () => {
    const withQuery = await api.rest('GET', '/graphql?query=%7B__typename%7D', { headers: { accept: 'text/html, application/json' } });
    expect(withQuery.body).toEqual({ data: { __typename: 'Query' } });
    const api2 = await api.rest('GET', '/graphql?query=%7B__typename%7D', { headers: { accept: 'application/json' } });
    expect(api2.body).toEqual({ data: { __typename: 'Query' } });
  });
});

describe('production', () => {
  let prod: TestApp;
  beforeAll(async () => {
    prod = await startTestApp({
      NODE_ENV: 'production',
      JWT_SECRET: 'production-secret-that-is-at-least-32-characters',
      SMTP_URL: 'smtp://127.0.0.1:1',
      APP_URL: 'https://app.example',
      // Production serves /metrics only to the scraper's bearer (CONTRACT 18; test/metrics-access.test.ts).
      METRICS_TOKEN: 'production-metrics-token',
    });
  });
  afterAll(() => prod.close());

  it('has no IDE (and Apollo shows no landing page) on GET /graphql', async () => {
    const res = await fetch(`${prod.url}/graphql`, { headers: { accept: 'text/html' } });
    const text = await res.text();
    expect(res.headers.get('content-type') ?? '').not.toMatch(/text\/html/);
    expect(text).not.toMatch(/graphiql|<html|apollo/i);
    expect((await fetch(`${prod.url}/graphql/assets/ide.js`)).status).toBe(404);
  });

  it('still serves GraphQL over GET, /docs and its own /metrics registry', async () => {
    const res = await fetch(`${prod.url}/graphql?query=%7B__typename%7D`);
    expect(await res.json()).toEqual({ data: { __typename: 'Query' } });
    expect((await fetch(`${prod.url}/docs`)).status).toBe(200);
    const metrics = await (await fetch(`${prod.url}/metrics`, { headers: { authorization: 'Bearer production-metrics-token' } })).text();
    expect(metrics).toContain('graphql_operations_total{operation_name="anonymous",operation_type="query",outcome="success"} 1');
  });
});
