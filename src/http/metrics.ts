import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { CONNECTION_STATES, connectionsByState } from '../db/activity';
import { namedStatementsOf } from '../db/named-statements';
import { readRoutingOf } from '../db/replicas';
import { AppError } from '../core/errors';
import { sendError } from './error-handler';
import type { Metrics } from '../core/metrics';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Operation names come from clients: only well-formed ones become labels, and only so many. */
const MAX_OPERATION_NAMES = 200;
const OPERATION_NAME = /^[_A-Za-z][_0-9A-Za-z]{0,63}$/;

export function createMetrics(orm: MikroORM): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const httpLabels = ['method', 'route', 'status_code'] as const;
  const httpRequests = new Counter({ name: 'http_requests_total', help: 'HTTP requests by method, route pattern and status', labelNames: httpLabels, registers: [registry] });
  const httpDuration = new Histogram({ name: 'http_request_duration_seconds', help: 'HTTP request latency by method, route pattern and status', labelNames: httpLabels, buckets: BUCKETS, registers: [registry] });

  const gqlLabels = ['operation_name', 'operation_type', 'outcome'] as const;
  const gqlOperations = new Counter({ name: 'graphql_operations_total', help: 'GraphQL operations by name, type and outcome (success|error)', labelNames: gqlLabels, registers: [registry] });
  const gqlDuration = new Histogram({ name: 'graphql_operation_duration_seconds', help: 'GraphQL operation latency by name, type and outcome', labelNames: gqlLabels, buckets: BUCKETS, registers: [registry] });

  new Gauge({
    name: 'db_pool_connections',
    help: "This process's pooled connections to the primary by pg_stat_activity state (the scrape's own left out); absent when the primary does not answer",
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const counts = await connectionsByState(orm);
      this.reset();
      if (!counts) return;
      for (const state of new Set([...CONNECTION_STATES, ...counts.keys()])) this.set({ state }, counts.get(state) ?? 0);
    },
  });

  const wsSockets = new Gauge({ name: 'graphql_ws_open_sockets', help: 'Open GraphQL WebSocket connections', registers: [registry] });
  const wsActive = new Gauge({ name: 'graphql_subscriptions_active', help: 'Active GraphQL subscriptions by field', labelNames: ['field'] as const, registers: [registry] });
  const wsDelivered = new Counter({ name: 'graphql_subscription_events_delivered_total', help: 'Subscription events sent, one per subscriber, by field', labelNames: ['field'] as const, registers: [registry] });
  const wsLag = new Histogram({ name: 'graphql_subscription_delivery_lag_seconds', help: 'From the event\'s NOTIFY (in the writing transaction) to its send to a subscriber', labelNames: ['field'] as const, buckets: BUCKETS, registers: [registry] });
  const deliveredByField = new Map<string, { count: ReturnType<typeof wsDelivered.labels>; lag: ReturnType<typeof wsLag.labels> }>();

  // Named statements run unnamed after a failure of their name (db/named-statements.ts).
  const named = namedStatementsOf(orm);
  if (named) {
    const fallbacks = new Counter({ name: 'db_named_statement_fallbacks_total', help: 'Named statements run unnamed after their name failed: missing on the connection, duplicate, or a plan a migration invalidated', labelNames: ['reason'] as const, registers: [registry] });
    for (const reason of ['missing', 'duplicate', 'invalidated'] as const) fallbacks.inc({ reason }, 0);
    named.onFallback((reason) => fallbacks.inc({ reason }));
  }

  // Statements per pool (primary, replica-N) and the replicas' state (db/replicas.ts).
  const routing = readRoutingOf(orm);
  const queries = new Counter({ name: 'db_queries_total', help: 'SQL statements sent, by pool (primary, replica-1, ...)', labelNames: ['pool'] as const, registers: [registry] });
  queries.inc({ pool: 'primary' }, 0);
  // Once per statement: the labelled child per pool is looked up once.
  const queriesByPool = new Map<string, { inc(): void }>();
  routing?.onQuery((pool) => {
    let child = queriesByPool.get(pool);
    if (!child) queriesByPool.set(pool, (child = queries.labels(pool)));
    child.inc();
  });
  if (routing?.replicas.length) {
    new Gauge({
      name: 'db_replica_in_use',
      help: 'Whether a replica serves reads now (1) or is skipped (0: down, lagging or not a standby)',
      labelNames: ['pool'] as const,
      // Under a cluster every worker reports the state its primary measured: 0 if any worker skips it, not the workers' sum.
      aggregator: 'min',
      registers: [registry],
      collect() {
        for (const r of routing.status()) this.set({ pool: r.name }, r.inUse ? 1 : 0);
      },
    });
    new Gauge({
      name: 'db_replica_lag_seconds',
      help: 'How far each replica is behind the primary, as last measured (absent while it is down)',
      labelNames: ['pool'] as const,
      aggregator: 'max',
      registers: [registry],
      collect() {
        this.reset();
        for (const r of routing.status()) if (r.lagMs !== null && Number.isFinite(r.lagMs)) this.set({ pool: r.name }, r.lagMs / 1000);
      },
    });
  }

  // The labelled children per series, looked up by one string: prom-client would otherwise hash
  // the label object (sorting its keys) for the histogram and again for the counter per request.
  // Bounded by the route table's patterns × methods × statuses (no raw path is a label).
  const httpChildren = new Map<string, { duration: { observe(v: number): void }; requests: { inc(): void } }>();
  const httpSeries = (method: string, route: string, status: number) => {
    const key = `${method} ${status} ${route}`;
    let series = httpChildren.get(key);
    if (!series) {
      const labels = { method, route, status_code: String(status) };
      series = { duration: httpDuration.labels(labels), requests: httpRequests.labels(labels) };
      httpChildren.set(key, series);
    }
    return series;
  };

  const seenNames = new Set<string>();
  const operationLabel = (name: string | null | undefined): string => {
    if (!name || !OPERATION_NAME.test(name)) return 'anonymous';
    if (seenNames.has(name)) return name;
    if (seenNames.size >= MAX_OPERATION_NAMES) return 'other';
    seenNames.add(name);
    return name;
  };

  const metrics: Metrics = {
    registry,
    exposition: () => registry.metrics(),
    observeHttp(method, route, status, seconds) {
      // The route pattern, never the raw path: ids and tokens would make one series per request.
      const series = httpSeries(method, route ?? 'unmatched', status);
      series.duration.observe(seconds);
      series.requests.inc();
    },
    graphqlPlugin: {
      async requestDidStart() {
        const end = gqlDuration.startTimer();
        return {
          async willSendResponse({ operationName, operation, errors, response }) {
            const body = response.body;
            const failed = Boolean(errors?.length) || (body.kind === 'single' && Boolean(body.singleResult.errors?.length));
            const labels = { operation_name: operationLabel(operationName ?? null), operation_type: operation?.operation ?? 'unknown', outcome: failed ? 'error' : 'success' };
            end(labels);
            gqlOperations.inc(labels);
          },
        };
      },
    },
    subscriptions: {
      socketOpened: (delta) => wsSockets.inc(delta),
      active: (field, delta) => wsActive.inc({ field }, delta),
      // Once per subscriber per event (thousands per comment): the labelled children are looked up once per field.
      delivered(field, lagMs) {
        let child = deliveredByField.get(field);
        if (!child) deliveredByField.set(field, (child = { count: wsDelivered.labels(field), lag: wsLag.labels(field) }));
        child.count.inc();
        child.lag.observe(Math.max(0, lagMs) / 1000);
      },
    },
    async handler(_req, res) {
      const text = await metrics.exposition();
      res.setHeader('Content-Type', registry.contentType);
      res.send(text);
    },
  };
  return metrics;
}

/**
 * Who may read /metrics: with METRICS_TOKEN, only a request carrying
 * `Authorization: Bearer <token>` (anything else: 401 with `{message}`); in production without
 * a token nobody (null: the path is not mounted, so it answers 404 as an unknown path does); in
 * development and tests without a token, anyone (an empty list of guards).
 * Under WEB_CONCURRENCY > 1 the workers' figures reach the answering worker over IPC from the
 * cluster's primary (src/cluster.ts), never over HTTP, so the guard sits only in front of the scraper.
 */
export function metricsGuards(o: { token: string | undefined; production: boolean }): RequestHandler[] | null {
  if (o.token === undefined) return o.production ? null : [];
  // Digests of equal length, compared in constant time: neither the token's length nor its first
  // differing byte shows in the answer's timing.
  const expected = createHash('sha256').update(o.token).digest();
  const guard: RequestHandler = (req, res, next) => {
    const header = req.headers.authorization ?? '';
    const bearer = /^Bearer /i.test(header);
    const given = createHash('sha256').update(bearer ? header.slice(7).trim() : '').digest();
    if (timingSafeEqual(given, expected) && bearer) return next();
    res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
    sendError(res, AppError.unauthenticated());
  };
  return [guard];
}
