import 'reflect-metadata';
import type { Server } from 'node:http';
import express, { type Express } from 'express';
import { expressMiddleware } from '@as-integrations/express5';
import { headerTenantResolver, type TenantResolver } from './core/tenant';
import { AppError } from './core/errors';
import { buildGraphqlSchema } from './graphql/schema';
import { createApolloServer } from './graphql/server';
import { createSubscriptionServer, type SubscriptionServer } from './graphql/ws';
import { graphqlIde, graphqlIdeAsset, IDE_ASSET_ROUTE } from './graphql/ide';
import { requestId, requestLogger } from './http/logging';
import { createMetrics, type Metrics } from './http/metrics';
import { DOCS_ASSET_ROUTE, openApiHandlers } from './openapi/docs';
import { contextMiddleware } from './http/context.middleware';
import { errorHandler, routeGuard, sendError } from './http/error-handler';
import { contextOf, RouteTable } from './http/routes';
import { databaseReady, replicasReadiness } from './http/readiness';
import { replicaReadsPlugin } from './graphql/replica-reads';
import { InFlight } from './http/in-flight';
import { corsPolicy, graphqlRequestGuard, securityHeaders } from './http/security';
import { restRoutes } from './modules';
import { createServices, type AppDeps, type Services } from './modules/services';
import type { RequestContext } from './core/context';

export interface AppOptions {
  resolveTenant?: TenantResolver;
}

export interface BuiltApp {
  app: Express;
  services: Services;
  /** Set by shutdown: /readyz answers 503 so load balancers stop sending traffic. */
  state: { draining: boolean };
  /** Handlers still running, including those whose client has gone (shutdown waits for them). */
  inFlight: InFlight;
  /** This app's Prometheus registry and collectors (GET /metrics). */
  metrics: Metrics;
  /** GraphQL over WebSocket; attached to every server `app.listen` creates. */
  subscriptions: SubscriptionServer;
  startJobs(): void;
  /** Stops subscriptions, jobs and GraphQL; the ORM and the database belong to the caller. */
  close(): Promise<void>;
}

export async function createApp(deps: AppDeps, opts: AppOptions = {}): Promise<BuiltApp> {
  const services = createServices(deps);
  const state = { draining: false };
  const inFlight = new InFlight();
  const production = deps.config.env === 'production';
  const metrics = createMetrics(deps.orm);
  const schema = await buildGraphqlSchema(services);
  const apollo = createApolloServer(schema, {
    log: deps.log,
    production,
    plugins: [metrics.graphqlPlugin, replicaReadsPlugin],
  });
  await apollo.start();

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // Client IPs feed the rate limits: believe X-Forwarded-For only from the configured proxy hops.
  app.set('trust proxy', deps.config.trustProxy);

  const resolveTenant = opts.resolveTenant ?? headerTenantResolver;
  const subscriptions = createSubscriptionServer({ schema, deps, services, resolveTenant, app, state, metrics: metrics.subscriptions });
  // WebSocket upgrades never reach Express: whoever starts the server (main.ts, cluster workers,
  // the tests) gets the endpoint with it, without a second call to forget.
  const listen = app.listen.bind(app) as (...args: unknown[]) => Server;
  app.listen = ((...args: unknown[]) => {
    const server = listen(...args);
    subscriptions.attach(server);
    return server;
  }) as typeof app.listen;

  const routes = restRoutes(services);
  const table = new RouteTable();
  table.add('/healthz', 'get');
  table.add('/readyz', 'get');
  table.add('/graphql', 'get', 'post');
  for (const r of routes) table.add(r.path, r.method);
  // Observability and documentation (src/http/logging.ts, metrics.ts, src/openapi, src/graphql/ide.ts).
  table.add('/metrics', 'get');
  table.add('/openapi.json', 'get');
  table.add('/docs', 'get');
  table.add(DOCS_ASSET_ROUTE, 'get');
  if (!production) table.add(IDE_ASSET_ROUTE, 'get');

  // Before the route guard, so 404s and 405s get an id, a log line and a metric too.
  app.use(requestId());
  app.use(requestLogger(deps.log, table));
  app.use(metrics.http(table));
  app.use(securityHeaders());
  app.use(corsPolicy(deps.config.corsOrigins));
  app.use(routeGuard(table));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    if (state.draining) return sendError(res, AppError.unavailable());
    // With replicas configured, the body also says which serve reads now (a skipped one is no outage).
    if (await databaseReady(deps.orm)) res.json({ status: 'ready', ...replicasReadiness(deps.orm) });
    else sendError(res, AppError.unavailable());
  });

  app.get('/metrics', metrics.handler);
  const openapi = openApiHandlers();
  app.get('/openapi.json', openapi.document);
  app.get('/docs', openapi.page);
  app.get(DOCS_ASSET_ROUTE, openapi.asset);
  if (!production) {
    app.get(IDE_ASSET_ROUTE, graphqlIdeAsset);
    app.get('/graphql', graphqlIde());
  }

  app.use(express.json({ limit: '1mb', strict: false, type: ['application/json', 'application/*+json'] }));
  app.use(contextMiddleware(deps.orm, services.tokens, resolveTenant));

  // Anonymous callers of a route that only reads may be served by a replica (db/replicas.ts);
  // an authenticated caller always reads from the primary, so it sees its own writes at once.
  const replicaReads = (req: express.Request, res: express.Response, next: express.NextFunction) => {
    if (!req.headers.authorization) contextOf(res).readFrom = 'read';
    next();
  };
  for (const r of routes) {
    if (r.staleReadsOk) app[r.method](r.path, replicaReads, inFlight.track(r.handler));
    else app[r.method](r.path, inFlight.track(r.handler));
  }
  app.use('/graphql', graphqlRequestGuard());
  app.use(
    '/graphql',
    inFlight.track(expressMiddleware(apollo, { context: async ({ res }) => res.locals.ctx as RequestContext })),
  );
  app.use(errorHandler(deps.log));

  const jobs = services.jobs;
  return {
    app,
    services,
    state,
    inFlight,
    metrics,
    subscriptions,
    startJobs: () => jobs.forEach((j) => j.start()),
    async close() {
      await subscriptions.close();
      await Promise.all(jobs.map((j) => j.stop()));
      await apollo.stop();
    },
  };
}
