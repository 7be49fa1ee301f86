import { context, diag, DiagLogLevel, isSpanContextValid, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { GraphQLInstrumentation } from '@opentelemetry/instrumentation-graphql';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { core, NodeSDK } from '@opentelemetry/sdk-node';
import type { IncomingMessage } from 'node:http';
import { redactPath } from '../http/logging';
import { installTracing, type Tracing } from './tracing';

/**
 * OpenTelemetry traces (CONTRACT 18), loaded only when tracing is on (src/telemetry.ts) and
 * before express, http, pg and graphql are required, so that the instrumentations can patch them.
 *
 * Everything the SDK can take from the standard variables it takes from them: the exporter
 * (OTEL_EXPORTER_OTLP_ENDPOINT / _TRACES_ENDPOINT, _PROTOCOL http/protobuf or http/json, _HEADERS),
 * the sampler (OTEL_TRACES_SAMPLER, _ARG; parent-based always-on by default), the batch processor
 * (OTEL_BSP_*), the resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) and the propagators
 * (OTEL_PROPAGATORS; W3C trace context and baggage by default). Traces only: metrics are
 * /metrics (Prometheus), logs are stdout.
 *
 * What becomes a span:
 * - each HTTP request: a SERVER span continuing the caller's `traceparent`, named by the Express
 *   route that answered (`GET /posts/:id`; the instrumentation-express sets the route, and its
 *   request handler span is the only Express span kept: middleware and router layers are not
 *   worth a span each); health, readiness and metrics requests start no trace of their own
 *   (one that carries a `traceparent` is traced);
 * - each GraphQL operation: `graphql.parse`, `graphql.validate` and the operation span
 *   `query PostPage` (`<type> <name>`, `graphql.operation.name`/`.type`); no span per resolver;
 * - each SQL statement inside one of those: a CLIENT span with `db.system` and `db.system.name`
 *   `postgresql`, `db.namespace` and `db.query.text` with every literal replaced by `?` (MikroORM
 *   writes values into the statements: emails, hashes and mail texts must not reach the APM);
 *   the background jobs' and the replica probes' statements start no trace;
 * - each delivery of a live event to a topic's subscribers: a CONSUMER span `deliver <field>`, a
 *   child of the span that wrote the event (its `traceparent` travels in the NOTIFY payload), with
 *   the read of the row and each distinct subscriber operation's execution below it.
 */
export function startTelemetry(o: { serviceName: string | undefined; sdkLogLevel: string | undefined }): void {
  const sdk = new NodeSDK({
    ...(o.serviceName ? { serviceName: o.serviceName } : {}),
    // Traces only, whatever OTEL_METRICS_EXPORTER / OTEL_LOGS_EXPORTER say.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => OPERATIONAL.has(pathOf(req.url)) && req.headers.traceparent === undefined,
        // Neither query strings (GraphQL GET variables) nor tokens in paths reach a span.
        startIncomingSpanHook: (req) => redactedUrl(req as IncomingMessage),
        // No outgoing HTTP of the service's own (the exporter's requests are never traced).
        disableOutgoingRequestInstrumentation: true,
      }),
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER] }),
      new GraphQLInstrumentation({ ignoreResolveSpans: true, allowValues: false, mergeItems: true }),
      new PgInstrumentation({
        requireParentSpan: true,
        ignoreConnectSpans: true,
        requestHook: (span, info) => {
          // db.system (CONTRACT 18) beside the current conventions' db.system.name.
          span.setAttribute('db.system', 'postgresql');
          const text = typeof info.query.text === 'string' ? info.query.text : '';
          span.setAttribute('db.query.text', sanitizeSql(text));
          // A prepared statement's name is a digest (db/prepared.ts): the span is named by its command instead.
          if (info.query.name) {
            span.setAttribute('db.query.name', info.query.name);
            span.updateName(`pg.query:${/^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? 'QUERY'}${info.connection.database ? ` ${info.connection.database}` : ''}`);
          }
        },
      }),
    ],
  });
  sdk.start();

  const tracer = trace.getTracer('blog-api');
  const hooks: Tracing = {
    logFields(): Record<string, string> {
      const span = trace.getSpan(context.active());
      if (!span) return {};
      const sc = span.spanContext();
      if (!isSpanContextValid(sc)) return {};
      return { trace_id: sc.traceId, span_id: sc.spanId, trace_flags: `0${sc.traceFlags.toString(16)}`.slice(-2) };
    },
    traceparent() {
      const carrier: Record<string, string> = {};
      propagation.inject(context.active(), carrier);
      return carrier.traceparent;
    },
    delivery(d, run) {
      const parent = d.traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent: d.traceparent }) : ROOT_CONTEXT;
      const attributes = {
        'messaging.system': 'postgresql',
        'messaging.operation.type': 'process',
        'messaging.destination.name': d.topic,
        'graphql.subscription.field': d.field,
        'blog.live.event': d.event,
        'blog.live.subscribers': d.subscribers,
      };
      return tracer.startActiveSpan(`deliver ${d.field}`, { kind: SpanKind.CONSUMER, attributes }, parent, async (span: Span) => {
        try {
          return await run(context.active());
        } catch (err) {
          span.recordException(err as Error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
          throw err;
        } finally {
          span.end();
        }
      });
    },
    within: (ctx, fn) => context.with(ctx as Context, fn),
    quiet: (fn) => context.with(core.suppressTracing(context.active()), fn),
    logTo(log) {
      if (o.sdkLogLevel) return; // OTEL_LOG_LEVEL: the SDK writes its own diagnostics to the console
      const warn = (message: string, ...args: unknown[]) => log.warn({ source: 'opentelemetry', detail: args.map((a) => (a instanceof Error ? a.message : String(a))).join(' ') || undefined }, message);
      const none = () => undefined;
      diag.setLogger({ error: warn, warn, info: none, debug: none, verbose: none }, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
    },
    shutdown: () =>
      new Promise<void>((resolve) => {
        const giveUp = setTimeout(resolve, SHUTDOWN_MS);
        giveUp.unref();
        sdk.shutdown().then(resolve, resolve).finally(() => clearTimeout(giveUp));
      }),
  };
  installTracing(hooks);
}

const OPERATIONAL = new Set(['/healthz', '/readyz', '/metrics']);
/** How long the last export may take at shutdown before the process exits without it. */
const SHUTDOWN_MS = 3_000;

function pathOf(url: string | undefined): string {
  const q = (url ?? '/').indexOf('?');
  return q < 0 ? (url ?? '/') : url!.slice(0, q);
}

/** url.path with the verify and reset tokens cut out (as in the log line); url.query with every value replaced. */
function redactedUrl(req: IncomingMessage): Record<string, string> {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const out: Record<string, string> = { 'url.path': redactPath(q < 0 ? url : url.slice(0, q)) };
  if (q >= 0) {
    const params = new URLSearchParams(url.slice(q + 1));
    out['url.query'] = [...new Set(params.keys())].map((k) => `${encodeURIComponent(k)}=REDACTED`).join('&');
  }
  return out;
}

const isIdent = (c: string | undefined) => c !== undefined && /[A-Za-z0-9_$]/.test(c);
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

/**
 * The statement with every literal a `?`: strings ('...', E'...', $$...$$) and numbers; identifiers,
 * quoted identifiers, placeholders ($1) and comments stay. MikroORM inlines the values it binds.
 */
export function sanitizeSql(sql: string): string {
  let out = '';
  const n = sql.length;
  let i = 0;
  while (i < n) {
    const c = sql[i];
    if (c === "'") {
      const prev = out[out.length - 1];
      const prefixed = prev !== undefined && /[EeXxBbNn]/.test(prev) && !isIdent(out[out.length - 2]);
      const escapes = prefixed && (prev === 'E' || prev === 'e');
      if (prefixed) out = out.slice(0, -1);
      for (i++; i < n; i++) {
        if (escapes && sql[i] === '\\') {
          i++;
          continue;
        }
        if (sql[i] === "'") {
          if (sql[i + 1] === "'") {
            i++;
            continue;
          }
          i++;
          break;
        }
      }
      out += '?';
    } else if (c === '"') {
      let j = i + 1;
      for (; j < n; j++) if (sql[j] === '"') { if (sql[j + 1] === '"') j++; else break; }
      out += sql.slice(i, j + 1);
      i = j + 1;
    } else if (c === '-' && sql[i + 1] === '-') {
      const j = sql.indexOf('\n', i);
      const end = j < 0 ? n : j;
      out += sql.slice(i, end);
      i = end;
    } else if (c === '/' && sql[i + 1] === '*') {
      const j = sql.indexOf('*/', i + 2);
      const end = j < 0 ? n : j + 2;
      out += sql.slice(i, end);
      i = end;
    } else if (c === '$' && !isIdent(out[out.length - 1])) {
      const tag = /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i, i + 66))?.[0];
      if (tag) {
        const j = sql.indexOf(tag, i + tag.length);
        i = j < 0 ? n : j + tag.length;
        out += '?';
      } else {
        let j = i + 1;
        while (isDigit(sql[j])) j++;
        out += sql.slice(i, j);
        i = j;
      }
    } else if (isIdent(c) && !isDigit(c)) {
      let j = i + 1;
      while (isIdent(sql[j])) j++;
      out += sql.slice(i, j);
      i = j;
    } else if (isDigit(c) || (c === '.' && isDigit(sql[i + 1]) && !isIdent(out[out.length - 1]))) {
      let j = i;
      while (isDigit(sql[j]) || sql[j] === '.') j++;
      if ((sql[j] === 'e' || sql[j] === 'E') && (isDigit(sql[j + 1]) || ((sql[j + 1] === '+' || sql[j + 1] === '-') && isDigit(sql[j + 2])))) {
        j += 2;
        while (isDigit(sql[j])) j++;
      }
      out += '?';
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}
