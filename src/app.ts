import 'reflect-metadata';
import { createServer, type RequestListener, type Server } from 'node:http';
import express from 'express';
import { headerTenantResolver, type TenantResolver } from './core/tenant';
import { AppError } from './core/errors';
import { buildGraphqlSchema } from './graphql/schema';
import { createApolloServer } from './graphql/server';
import { createSubscriptionServer, type SubscriptionServer } from './graphql/ws';
import { graphqlIde, graphqlIdeAsset, IDE_ASSET_ROUTE, wantsIde } from './graphql/ide';
import { graphqlHttp } from './graphql/http';
import { createMetrics, type Metrics } from './http/metrics';
import { DOCS_ASSET_ROUTE, openApiHandlers } from './openapi/docs';
import { errorHandler, sendError } from './http/error-handler';
import { RouteTable } from './http/routes';
import { restRouter } from './http/rest';
import { createFront } from './http/front';
import { databaseReady, replicasReadiness } from './http/readiness';
import { replicaReadsPlugin } from './graphql/replica-reads';
import { InFlight } from './http/in-flight';
import { asDocument } from './http/security';
import { restRoutes } from './modules';
import { createServices, type AppDeps, type Services } from './modules/services';

export interface AppOptions {
  resolveTenant?: TenantResolver;
}

export interface BuiltApp {
  /** The request listener: REST, GraphQL over HTTP, health, metrics and documentation. */
  handle: RequestListener;
  /**
   * A server with `handle` and the GraphQL WebSocket endpoint (whoever starts one, main.ts,
   * cluster workers or the tests, gets both without a second call to forget).
   */
  listen(port: number, host: string, callback: (err?: Error) => void): Server;
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

  // Express answers what is neither REST nor GraphQL: health, metrics, documentation. The front
  // (http/front.ts) has already given each request its id, headers, log line, metric, CORS and
  // 404/405 before it gets here.
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
  // The pages and their files carry the headers of an HTML document, not an API answer's (http/security.ts).
  app.get('/docs', asDocument, openapi.page);
  app.get(DOCS_ASSET_ROUTE, asDocument, openapi.asset);
  if (!production) {
    app.get(IDE_ASSET_ROUTE, asDocument, graphqlIdeAsset);
    app.get('/graphql', asDocument, graphqlIde());
  }
  app.use(errorHandler(deps.log));

  const adapterDeps = { orm: deps.orm, tokens: services.tokens, resolveTenant, inFlight, log: deps.log, app };
  const rest = restRouter(routes, adapterDeps);
  // GraphiQL's page (not in production) is Express's; every GraphQL operation is the adapter's.
  const graphql = graphqlHttp(apollo, { ...adapterDeps, passOn: (req) => !production && wantsIde(req) });
  const handle = createFront({ table, log: deps.log, metrics, corsOrigins: deps.config.corsOrigins, adapters: [rest.dispatch, graphql], others: app });

  const jobs = services.jobs;
  return {
    handle,
    listen(port: number, host: string, callback: (err?: Error) => void): Server {
      const server = createServer(handle);
      // As Express 5's listen: the callback also hears a listen error (EADDRINUSE).
      const failed = (err: Error) => callback(err);
      server.once('error', failed);
      server.listen(port, host, () => {
        server.off('error', failed);
        callback();
      });
      subscriptions.attach(server);
      return server;
    },
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
