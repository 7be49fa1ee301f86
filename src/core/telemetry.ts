import { suppressTracing } from '@opentelemetry/core';
import { context, diag, DiagLogLevel, isSpanContextValid, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { GraphQLInstrumentation } from '@opentelemetry/instrumentation-graphql';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { IncomingMessage } from 'node:http';
import { redactPath } from './redact';
import { installTracing, type Tracing } from './tracing';

/**
 * OpenTelemetry traces, loaded only when tracing is on (src/telemetry.ts) and
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
 *   route that answered (`GET /posts/:id`: instrumentation-express sets the route; it makes no
 *   span of its own, since a span per middleware or handler would cost more than it tells);
 *   health, readiness and metrics requests start no trace of their own (one that carries a
 *   `traceparent` is traced);
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
        startIncomingSpanHook: (req) => redactedUrl(req),
        // No outgoing HTTP of the service's own (the exporter's requests are never traced).
        disableOutgoingRequestInstrumentation: true,
      }),
      // Only for the route: it names the SERVER span (http.route) even for the layers it makes no span for.
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER, ExpressLayerType.REQUEST_HANDLER] }),
      new GraphQLInstrumentation({ ignoreResolveSpans: true, allowValues: false, mergeItems: true }),
      new PgInstrumentation({
        requireParentSpan: true,
        ignoreConnectSpans: true,
        requestHook: (span, info) => {
          // db.system beside the current conventions' db.system.name.
          span.setAttribute('db.system', 'postgresql');
          const text = typeof info.query.text === 'string' ? info.query.text : '';
          span.setAttribute('db.query.text', sanitizeSql(text));
          // A named prepared statement's name says nothing to a reader: the span is named by its command instead.
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
    quiet: (fn) => context.with(suppressTracing(context.active()), fn),
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

/** Whether the char code is of an identifier: a letter, digit, `_` or `$`. */
function identCode(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 36;
}
const isDigitCode = (c: number) => c >= 48 && c <= 57;

/** Recent statements' sanitized texts: statements without values written in (the ORM's BEGIN, COMMIT, fixed reads) repeat. */
const sanitized = new Map<string, string>();
const SANITIZED_MAX = 500;

/**
 * The statement with every literal a `?`: strings ('...', E'...', X'...', $$...$$, $tag$...$tag$)
 * and numbers; identifiers, quoted identifiers, placeholders ($1), casts and comments stay.
 * MikroORM writes the values it binds into its statements.
 */
export function sanitizeSql(sql: string): string {
  const hit = sanitized.get(sql);
  if (hit !== undefined) return hit;
  const out = scrub(sql);
  if (sanitized.size >= SANITIZED_MAX) sanitized.clear();
  sanitized.set(sql, out);
  return out;
}

function scrub(sql: string): string {
  const n = sql.length;
  let out = '';
  /** Start of the text not yet copied to `out`. */
  let from = 0;
  const replace = (start: number, end: number) => {
    out += sql.slice(from, start) + '?';
    from = end;
  };
  let i = 0;
  while (i < n) {
    const c = sql.charCodeAt(i);
    if (c === 39 /* ' */) {
      // A prefix letter (E'', X'', B'', N'') belongs to the literal when it is not the end of an identifier.
      const p = i > 0 ? sql.charCodeAt(i - 1) : 0;
      const prefixed = i > 0 && /[EeXxBbNn]/.test(sql[i - 1]) && !(i > 1 && identCode(sql.charCodeAt(i - 2)));
      const escapes = prefixed && (p === 69 || p === 101);
      let j = i + 1;
      for (; j < n; j++) {
        const d = sql.charCodeAt(j);
        if (escapes && d === 92 /* \ */) j++;
        else if (d === 39) {
          if (sql.charCodeAt(j + 1) === 39) j++;
          else break;
        }
      }
      replace(prefixed ? i - 1 : i, Math.min(n, j + 1));
      i = j + 1;
    } else if (c === 34 /* " */) {
      let j = i + 1;
      for (; j < n; j++) if (sql.charCodeAt(j) === 34) { if (sql.charCodeAt(j + 1) === 34) j++; else break; }
      i = j + 1;
    } else if (c === 45 /* - */ && sql.charCodeAt(i + 1) === 45) {
      const j = sql.indexOf('\n', i);
      i = j < 0 ? n : j;
    } else if (c === 47 /* / */ && sql.charCodeAt(i + 1) === 42 /* * */) {
      const j = sql.indexOf('*/', i + 2);
      i = j < 0 ? n : j + 2;
    } else if (c === 36 /* $ */) {
      const tag = /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i, i + 66))?.[0];
      if (tag) {
        const j = sql.indexOf(tag, i + tag.length);
        const end = j < 0 ? n : j + tag.length;
        replace(i, end);
        i = end;
      } else {
        i++;
        while (i < n && isDigitCode(sql.charCodeAt(i))) i++; // $1: a placeholder
      }
    } else if (identCode(c) && !isDigitCode(c)) {
      i++;
      while (i < n && identCode(sql.charCodeAt(i))) i++;
    } else if (isDigitCode(c) || (c === 46 /* . */ && isDigitCode(sql.charCodeAt(i + 1)) && !(i > 0 && identCode(sql.charCodeAt(i - 1))))) {
      let j = i;
      while (j < n && (isDigitCode(sql.charCodeAt(j)) || sql.charCodeAt(j) === 46)) j++;
      const e = sql.charCodeAt(j);
      if ((e === 101 || e === 69) && (isDigitCode(sql.charCodeAt(j + 1)) || ((sql[j + 1] === '+' || sql[j + 1] === '-') && isDigitCode(sql.charCodeAt(j + 2))))) {
        j += 2;
        while (j < n && isDigitCode(sql.charCodeAt(j))) j++;
      }
      replace(i, j);
      i = j;
    } else i++;
  }
  return from === 0 ? sql : out + sql.slice(from);
}
