import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../bench/otlp-receiver';
import { sanitizeSql } from '../src/core/telemetry';
import { loadConfig } from '../src/config/config';
import { createTestDatabase, type TestApp } from './support/harness';
import { buildService, removeService, startInstance, stopInstance, serviceRoot, type Instance } from './support/instances';
import { connect, untilSubscribedAt } from './support/ws';
import { until } from './support/wait';

/**
 * OpenTelemetry traces (CONTRACT 18), as an operator's collector sees them: the built service
 * runs as a real process (the SDK must load before express, http, pg and graphql, which only a
 * fresh process shows) and exports to a real OTLP/HTTP receiver on loopback
 * (bench/otlp-receiver.ts), one instance in each encoding. One caller's `traceparent` is followed
 * through the HTTP server span, the GraphQL operation span, the SQL spans and a subscription's
 * delivery, and into the request's log line.
 */
jest.setTimeout(120_000);

let protobuf: { receiver: OtlpReceiver; instance: Instance };
let json: { receiver: OtlpReceiver; instance: Instance };
let dataDir: string;
let user: { token: string; id: number; email: string };
let postId: number;

const PASSWORD = 'password123';
/** A caller's trace: 32 hex digits of trace id, 16 of its own span id. */
function traceparent(): { header: string; traceId: string; parentId: string } {
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join('');
  const traceId = hex(32);
  const parentId = hex(16);
  return { header: `00-${traceId}-${parentId}-01`, traceId, parentId };
}

async function call(i: Instance, method: string, path: string, o: { body?: unknown; token?: string; headers?: Record<string, string> } = {}) {
  const res = await fetch(`${i.url()}${path}`, {
    method,
    headers: { ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}), ...(o.token ? { authorization: `Bearer ${o.token}` } : {}), ...o.headers },
    body: o.body === undefined ? undefined : JSON.stringify(o.body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

beforeAll(async () => {
  buildService();
  const databaseUrl = await createTestDatabase();
  dataDir = mkdtempSync(join(tmpdir(), 'blog-api-telemetry-'));
  const start = async (protocol: 'http/protobuf' | 'http/json') => {
    const receiver = await startOtlpReceiver();
    const instance = startInstance({
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      JWT_SECRET: 'telemetry-secret-that-is-at-least-32-characters',
      BCRYPT_COST: '4',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
      OTEL_SERVICE_NAME: 'blog-api-under-test',
      OTEL_TRACES_SAMPLER: 'parentbased_always_on',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    return { receiver, instance };
  };
  [protobuf, json] = await Promise.all([start('http/protobuf'), start('http/json')]);
  await Promise.all([protobuf.instance.ready, json.instance.ready]);
  const email = `traced-${Date.now()}@example.test`;
  const reg = await call(protobuf.instance, 'POST', '/auth/register', { body: { name: 'Traced Author', email, password: PASSWORD } });
  expect(reg.status).toBe(201);
  user = { token: reg.body.token, id: reg.body.user.id, email };
  const post = await call(protobuf.instance, 'POST', '/posts', { token: user.token, body: { title: 'Traced', body: 'Followed through every layer' } });
  postId = post.body.id;
  expect((await call(protobuf.instance, 'PATCH', `/posts/${postId}/publish`, { token: user.token })).status).toBe(200);
});

afterAll(async () => {
  await Promise.all([stopInstance(protobuf?.instance), stopInstance(json?.instance)]);
  await protobuf?.receiver.close();
  await json?.receiver.close();
  removeService();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** The trace's spans once `done` holds for them (the exporter sends a batch every 100 ms here). */
async function traceOf(receiver: OtlpReceiver, traceId: string, done: (spans: ReceivedSpan[]) => boolean, ms = 15_000): Promise<ReceivedSpan[]> {
  const complete = () => {
    const spans = receiver.spans.filter((s) => s.traceId === traceId);
    return done(spans) && spans;
  };
  return until(complete, `trace ${traceId} to be complete`, { ms, everyMs: 50 }).catch((err: Error) => {
    throw new Error(`${err.message}: ${JSON.stringify(receiver.spans.filter((s) => s.traceId === traceId).map((s) => `${s.name} (${s.kind})`))}`);
  });
}

/** Whether `span` is below `ancestor` in `spans` (following parent links). */
function below(spans: ReceivedSpan[], span: ReceivedSpan, ancestor: ReceivedSpan): boolean {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  for (let p = byId.get(span.parentSpanId); p; p = byId.get(p.parentSpanId)) if (p === ancestor) return true;
  return false;
}

const sqlSpans = (spans: ReceivedSpan[]) => spans.filter((s) => s.kind === 'CLIENT' && s.attributes['db.system'] === 'postgresql');

/** The request's log line, once written (at the response's close). */
function logLine(i: Instance, match: (l: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  return until(() => i.logs().find((l) => l.msg === 'request' && match(l)), 'the request line', { ms: 10_000 });
}

describe('REST', () => {
  it("continues the caller's trace: a SERVER span named by the route, SQL spans below it, and the same trace id in the log line", async () => {
    const tp = traceparent();
    const res = await call(protobuf.instance, 'GET', `/posts/${postId}`, { headers: { traceparent: tp.header } });
    expect(res.status).toBe(200);
    const spans = await traceOf(protobuf.receiver, tp.traceId, (s) => s.some((x) => x.kind === 'SERVER') && sqlSpans(s).length > 0);
    const server = spans.find((s) => s.kind === 'SERVER')!;
    expect(server).toMatchObject({ name: 'GET /posts/:id', parentSpanId: tp.parentId, encoding: 'protobuf' });
    expect(server.attributes).toMatchObject({ 'http.route': '/posts/:id', 'http.request.method': 'GET', 'http.response.status_code': 200 });
    expect(server.resource['service.name']).toBe('blog-api-under-test');
    const sql = sqlSpans(spans);
    for (const s of sql) {
      expect(below(spans, s, server)).toBe(true);
      expect(s.attributes).toMatchObject({ 'db.system': 'postgresql', 'db.system.name': 'postgresql' });
      // The post's id is a bound parameter ($1), never part of the statement's text.
      expect(s.attributes['db.query.text']).toMatch(/^select .* where "p"\."id" = \$1 /);
      expect(s.attributes['db.query.text']).not.toMatch(new RegExp(`= ${postId}\\b`));
    }
    const line = await logLine(protobuf.instance, (l) => l.trace_id === tp.traceId);
    expect(line).toMatchObject({ route: '/posts/:id', status: 200, trace_id: tp.traceId, span_id: server.spanId });
  });

  it('a request without traceparent starts its own trace; health, readiness and metrics start none unless asked', async () => {
    const before = protobuf.receiver.spans.length;
    await call(protobuf.instance, 'GET', '/healthz');
    await call(protobuf.instance, 'GET', '/readyz');
    const list = await call(protobuf.instance, 'GET', '/posts');
    expect(list.status).toBe(200);
    const tp = traceparent();
    await call(protobuf.instance, 'GET', '/healthz', { headers: { traceparent: tp.header } });
    const asked = await traceOf(protobuf.receiver, tp.traceId, (s) => s.some((x) => x.kind === 'SERVER'));
    expect(asked.find((s) => s.kind === 'SERVER')).toMatchObject({ name: 'GET /healthz', parentSpanId: tp.parentId });
    // A marker after them: once a later request's span is in, so is every span that ended before
    // it (the exporter sends its batches one after another, in the order the spans ended).
    const marker = traceparent();
    await call(protobuf.instance, 'GET', '/healthz', { headers: { traceparent: marker.header } });
    await traceOf(protobuf.receiver, marker.traceId, (s) => s.some((x) => x.kind === 'SERVER'));
    const servers = protobuf.receiver.spans.slice(before).filter((s) => s.kind === 'SERVER' && s.traceId !== marker.traceId).map((s) => s.name);
    expect(servers.sort()).toEqual(['GET /healthz', 'GET /posts']);
    const own = protobuf.receiver.spans.slice(before).find((s) => s.name === 'GET /posts')!;
    expect(own.parentSpanId).toBe('');
  });
});

describe('GraphQL', () => {
  it("continues the caller's trace through the HTTP span, the operation span naming the operation, and SQL below the operation", async () => {
    const tp = traceparent();
    const res = await call(protobuf.instance, 'POST', '/graphql', {
      headers: { traceparent: tp.header },
      body: { query: 'query TracedPost($id: Int!) { post(id: $id) { id title user { name } comments { id } } }', variables: { id: postId }, operationName: 'TracedPost' },
    });
    expect(res.body.data.post).toMatchObject({ id: postId, title: 'Traced', user: { name: 'Traced Author' } });
    const spans = await traceOf(protobuf.receiver, tp.traceId, (s) => s.some((x) => x.kind === 'SERVER') && s.some((x) => x.name === 'query TracedPost') && sqlSpans(s).length > 0);
    const server = spans.find((s) => s.kind === 'SERVER')!;
    expect(server).toMatchObject({ name: 'POST /graphql', parentSpanId: tp.parentId });
    const operation = spans.find((s) => s.name === 'query TracedPost')!;
    expect(operation.attributes).toMatchObject({ 'graphql.operation.name': 'TracedPost', 'graphql.operation.type': 'query' });
    expect(below(spans, operation, server)).toBe(true);
    const sql = sqlSpans(spans);
    expect(sql.length).toBeGreaterThan(0);
    for (const s of sql) expect(below(spans, s, operation)).toBe(true);
    const line = await logLine(protobuf.instance, (l) => l.trace_id === tp.traceId);
    expect(line).toMatchObject({ route: '/graphql', operation: 'TracedPost', trace_id: tp.traceId, span_id: server.spanId });
  });
});

describe('subscriptions', () => {
  it("a delivery is a CONSUMER span in the writer's trace, with the row's read and the subscriber's operation below it", async () => {
    const ws = connect({ url: protobuf.instance.url() } as TestApp);
    try {
      await ws.connected;
      const sub = ws.subscribe('subscription TracedComments($postId: Int!) { commentAdded(postId: $postId) { id body user { name } } }', { postId });
      // Subscribed once /metrics counts it (the process is not ours to look into).
      await untilSubscribedAt(protobuf.instance.url(), 'commentAdded');
      const tp = traceparent();
      const comment = await call(protobuf.instance, 'POST', `/posts/${postId}/comments`, { token: user.token, headers: { traceparent: tp.header }, body: { body: 'Traced comment' } });
      expect(comment.status).toBe(201);
      expect((await sub.nth(0)).data).toEqual({ commentAdded: { id: comment.body.id, body: 'Traced comment', user: { name: 'Traced Author' } } });

      const spans = await traceOf(protobuf.receiver, tp.traceId, (s) => {
        const d = s.find((x) => x.kind === 'CONSUMER');
        return !!d && s.some((x) => x.name === 'subscription TracedComments') && sqlSpans(s).some((q) => below(s, q, d));
      });
      const server = spans.find((s) => s.kind === 'SERVER')!;
      expect(server).toMatchObject({ name: 'POST /posts/:id/comments', parentSpanId: tp.parentId });
      const delivery = spans.find((s) => s.kind === 'CONSUMER')!;
      expect(delivery.name).toBe('deliver commentAdded');
      expect(delivery.attributes).toMatchObject({ 'graphql.subscription.field': 'commentAdded', 'messaging.system': 'postgresql', 'blog.live.subscribers': 1 });
      // The writer's span is its parent: the trace goes from the caller through the write to the delivery.
      expect(below(spans, delivery, server)).toBe(true);
      const operation = spans.find((s) => s.name === 'subscription TracedComments')!;
      expect(below(spans, operation, delivery)).toBe(true);
      expect(sqlSpans(spans).filter((q) => below(spans, q, delivery)).length).toBeGreaterThan(0);
      const line = await logLine(protobuf.instance, (l) => l.trace_id === tp.traceId);
      expect(line).toMatchObject({ route: '/posts/:id/comments', status: 201, span_id: server.spanId });
      sub.unsubscribe();
    } finally {
      await ws.dispose();
    }
  });
});

describe('OTLP encodings', () => {
  it('http/json exports the same trace as http/protobuf does', async () => {
    const tp = traceparent();
    expect((await call(json.instance, 'GET', `/posts/${postId}`, { headers: { traceparent: tp.header } })).status).toBe(200);
    const spans = await traceOf(json.receiver, tp.traceId, (s) => s.some((x) => x.kind === 'SERVER') && sqlSpans(s).length > 0);
    const server = spans.find((s) => s.kind === 'SERVER')!;
    expect(server).toMatchObject({ name: 'GET /posts/:id', parentSpanId: tp.parentId, encoding: 'json' });
    for (const s of sqlSpans(spans)) expect(below(spans, s, server)).toBe(true);
    expect(json.receiver.requests.json).toBeGreaterThan(0);
    expect(json.receiver.requests.protobuf).toBe(0);
    expect(protobuf.receiver.requests.json).toBe(0);
    const line = await logLine(json.instance, (l) => l.trace_id === tp.traceId);
    expect(line.span_id).toBe(server.spanId);
  });
});

describe('a collector that is down', () => {
  it('costs no request: the answers stay 200, the lost export is a warning in the log, and tracing resumes', async () => {
    json.receiver.failWith(503);
    try {
      for (let i = 0; i < 3; i++) expect((await call(json.instance, 'GET', `/posts/${postId}`, { headers: { traceparent: traceparent().header } })).status).toBe(200);
      await until(() => json.instance.logs().some((l) => l.source === 'opentelemetry' && l.level === 40), 'a warning about the failed export', { ms: 10_000 });
    } finally {
      json.receiver.failWith(null);
    }
    const tp = traceparent();
    expect((await call(json.instance, 'GET', `/posts/${postId}`, { headers: { traceparent: tp.header } })).status).toBe(200);
    await traceOf(json.receiver, tp.traceId, (s) => s.some((x) => x.kind === 'SERVER'));
  });
});

describe('what spans never carry', () => {
  it('no query string values, no tokens in paths, no SQL literals (emails, hashes, mail texts)', async () => {
    const tp = traceparent();
    const email = `secret-${Date.now()}@example.test`;
    await call(protobuf.instance, 'POST', '/auth/register', { headers: { traceparent: tp.header }, body: { name: 'Secretive', email, password: 'a-secret-password' } });
    const tp2 = traceparent();
    const q = encodeURIComponent('query Me($t: String) { __typename }');
    await call(protobuf.instance, 'GET', `/graphql?query=${q}&variables=${encodeURIComponent(JSON.stringify({ t: 'a-secret-variable' }))}`, { headers: { traceparent: tp2.header } });
    const tp3 = traceparent();
    await call(protobuf.instance, 'POST', '/auth/verify-email/not-a-real-token-but-secret', { headers: { traceparent: tp3.header } });
    const spans = [
      ...(await traceOf(protobuf.receiver, tp.traceId, (s) => sqlSpans(s).some((x) => /insert into "users"/i.test(String(x.attributes['db.query.text']))))),
      ...(await traceOf(protobuf.receiver, tp2.traceId, (s) => s.some((x) => x.kind === 'SERVER'))),
      ...(await traceOf(protobuf.receiver, tp3.traceId, (s) => s.some((x) => x.kind === 'SERVER'))),
    ];
    const text = JSON.stringify(spans, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
    for (const secret of [email, 'a-secret-password', 'a-secret-variable', 'not-a-real-token-but-secret', '$2b$']) expect(text).not.toContain(secret);
    const get = spans.find((s) => s.traceId === tp2.traceId && s.kind === 'SERVER')!;
    expect(get.attributes['url.query']).toBe('query=REDACTED&variables=REDACTED');
    const verify = spans.find((s) => s.traceId === tp3.traceId && s.kind === 'SERVER')!;
    expect(verify.attributes['url.path']).toBe('/auth/verify-email/[REDACTED]');
  });

  it('sanitizeSql replaces every literal and keeps the rest', () => {
    expect(sanitizeSql(`insert into "users" ("email", "n") values ('a''b@x.test', 42), (E'x\\'y', -3.5e10) returning "id"`)).toBe(`insert into "users" ("email", "n") values (?, ?), (?, -?) returning "id"`);
    expect(sanitizeSql(`select $1, $$dollar 'quoted'$$, $tag$x$tag$ from t0 where a = 1 -- note 'x'\n and b::int = .5`)).toBe(`select $1, ?, ? from t0 where a = ? -- note 'x'\n and b::int = ?`);
    expect(sanitizeSql(`select pg_notify('blog_live_events', '{"type":"x"}')`)).toBe(`select pg_notify(?, ?)`);
    expect(sanitizeSql(`select "a""b", x'ff', B'101' from "t"`)).toBe(`select "a""b", ?, ? from "t"`);
  });
});

describe('tracing off', () => {
  it('without an exporter endpoint nothing of OpenTelemetry is loaded; with one, the SDK is', () => {
    // Modules of the SDK, its exporters and instrumentations loaded by the whole service. The API
    // package alone does not count: prom-client requires it for its exemplars, tracing or not.
    const loaded = (env: Record<string, string>) => {
      const script = `require(${JSON.stringify(join(serviceRoot(), 'dist', 'src', 'telemetry.js'))}); require(${JSON.stringify(join(serviceRoot(), 'dist', 'src', 'app.js'))});
        process.stdout.write(String(Object.keys(require.cache).filter((k) => k.includes('@opentelemetry') && !k.includes('@opentelemetry/api/')).length));`;
      const r = spawnSync(process.execPath, ['-e', script], { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(r.stderr);
      return Number(r.stdout);
    };
    expect(loaded({})).toBe(0);
    expect(loaded({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1', OTEL_SDK_DISABLED: 'true' })).toBe(0);
    expect(loaded({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:1/v1/traces' })).toBeGreaterThan(10);
  });

  it('the settings: on with either endpoint; protocol and sampler checked', () => {
    expect(loadConfig({}).tracing).toEqual({ enabled: false, serviceName: 'blog-api', sdkLogLevel: undefined });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing.enabled).toBe(true);
    expect(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces', OTEL_SERVICE_NAME: 'api' }).tracing).toEqual({ enabled: true, serviceName: undefined, sdkLogLevel: undefined });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,service.name=api' }).tracing.serviceName).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }).tracing.enabled).toBe(false);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/xml' })).toThrow('OTEL_EXPORTER_OTLP_PROTOCOL');
    expect(() => loadConfig({ OTEL_TRACES_SAMPLER: 'sometimes' })).toThrow('OTEL_TRACES_SAMPLER');
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector' })).toThrow('OTEL_EXPORTER_OTLP_ENDPOINT: must be a URL');
  });
});
