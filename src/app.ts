import 'reflect-metadata';
import { createServer, type RequestListener, type Server } from 'node:http';
import express, { type Express, type RequestHandler, type Router } from 'express';
import { headerTenantResolver, type TenantResolver } from './core/tenant';
import { AppError } from './core/errors';
import { buildGraphqlSchema } from './graphql/schema';
import { createApolloServer } from './graphql/server';
import { createSubscriptionServer, type SubscriptionServer } from './graphql/ws';
import { graphqlBody, graphqlHttp } from './graphql/http';
import { TrustedDocuments } from './graphql/documents';
import { Revalidation } from './core/http';
import type { Metrics } from './core/metrics';
import { createMetrics, metricsGuards } from './http/metrics';
import { DOCS_ASSET_ROUTE, openApiHandlers } from './openapi/docs';
import { accountPages, PAGE_ASSET_ROUTE } from './modules/auth/auth.pages';
import { sendError } from './http/error-handler';
import { finalHandler, notFound, requestStart, restErrors } from './http/chain';
import { mountPath, mountRoutes, restRouter } from './http/rest';
import { databaseReady } from './db/activity';
import { replicasReadiness } from './http/readiness';
import { replicaReadsPlugin } from './graphql/replica-reads';
import { InFlight } from './core/in-flight';
import { asDocument, corsPolicy } from './http/security';
import { restRoutes } from './modules';
import type { RouteDef } from './http/routes';
import { createServices, type AppDeps, type Services } from './modules/services';

export interface AppOptions {
  resolveTenant?: TenantResolver;
  /**
   * A team's own middleware and routes (a gateway's header check, a limiter, an error reporter),
   * given the Express app after the request id, security headers, log line, metric and CORS, and
   * before the service's routes (README: "Adding middleware").
   */
  extend?: (app: Express, kit: { services: Services; routes(defs: readonly RouteDef[]): Router }) => void;
}

export interface BuiltApp {
  /** The Express app: REST, GraphQL over HTTP, health, metrics and documentation. */
  app: Express;
  /** The request listener to serve: `app`, with a JSON answer for a target Express cannot route. */
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
  // GraphiQL is a development tool: a production process never loads its module (nor, on first
  // use, its bundler and bundle).
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- required only outside production
  const ide = production ? undefined : (require('./graphql/ide') as typeof import('./graphql/ide'));
  const metrics = createMetrics(deps.orm);
  const schema = await buildGraphqlSchema(services);
  const apollo = createApolloServer(schema, {
    log: deps.log,
    production,
    plugins: [metrics.graphqlPlugin, replicaReadsPlugin],
  });
  await apollo.start();

  const resolveTenant = opts.resolveTenant ?? headerTenantResolver;
  // GRAPHQL_DOCUMENTS and GRAPHQL_TRUSTED_DOCUMENTS, for both transports.
  const documents = new TrustedDocuments(deps.config.graphqlDocuments, deps.config.graphqlTrustedDocuments);
  const subscriptions = createSubscriptionServer({ schema, deps, services, resolveTenant, state, metrics: metrics.subscriptions, documents });
  // Revalidations of unchanged public reads answer 304 without building the page; not with read
  // replicas, whose pages may be older than the version read on the primary (core/http.ts Revalidation).
  const revalidation = deps.config.replicaUrls.length ? undefined : new Revalidation(deps.orm);
  const adapterDeps = { orm: deps.orm, tokens: services.tokens, resolveTenant, inFlight, publicCacheSeconds: deps.config.publicCacheSeconds, revalidation };

  const app = express();
  app.disable('x-powered-by');
  // Answers are JSON written once by the handlers (http/rest.ts respond); no ETag of Express's own.
  app.set('etag', false);
  // Node's querystring: a repeated key is an array, never a nested object (qs's `a[b]=`).
  app.set('query parser', 'simple');
  // Client IPs feed the rate limits: believe X-Forwarded-For only from the configured proxy hops.
  app.set('trust proxy', deps.config.trustProxy);
  app.set('case sensitive routing', true);

  // The chain every request passes, in order. Your own middleware goes in `extend` (README).
  app.use(requestStart({ log: deps.log, metrics }));
  // Without CORS_ORIGINS there is no CORS at all: no layer to pass.
  if (deps.config.corsOrigins.length) app.use(corsPolicy(deps.config.corsOrigins));
  opts.extend?.(app, { services, routes: (defs) => restRouter(defs, adapterDeps) });
  // Routes on the app's own router, not on nested Routers: each nesting is a second walk per
  // request. Express tries routes in order, so the busiest come first: GraphQL, then the posts.
  const graphql = graphqlHttp(apollo, { ...adapterDeps, documents });
  mountPath(app, '/graphql', { get: ide ? [idePage(ide), graphql] : [graphql], post: [graphqlBody, graphql] });
  mountRoutes(app, restRoutes(services), adapterDeps);
  mountOperational(app);
  app.use(notFound);
  app.use(restErrors(deps.log));

  /** Health, metrics and documentation; each path's other methods 405. */
  function mountOperational(router: Express) {
    mountPath(router, '/healthz', { get: [(_req, res) => void res.json({ status: 'ok' })] });
    mountPath(router, '/readyz', {
      get: [
        async (_req, res) => {
          if (state.draining) return sendError(res, AppError.unavailable());
          // With replicas configured, the body also says which serve reads now (a skipped one is no outage).
          if (await databaseReady(deps.orm)) res.json({ status: 'ready', ...replicasReadiness(deps.orm) });
          else sendError(res, AppError.unavailable());
        },
      ],
    });
    // Behind METRICS_TOKEN when set; in production without one, not served at all (404).
    const guards = metricsGuards({ token: deps.config.metricsToken, production });
    if (guards) mountPath(router, '/metrics', { get: [...guards, metrics.handler] });
    const openapi = openApiHandlers();
    mountPath(router, '/openapi.json', { get: [openapi.document] });
    // The pages and their files carry the headers of an HTML document, not an API answer's (http/security.ts).
    mountPath(router, '/docs', { get: [asDocument, openapi.page] });
    mountPath(router, DOCS_ASSET_ROUTE, { get: [asDocument, openapi.asset] });
    // The pages the reset and verification links of the mails open (modules/auth/auth.pages.ts).
    const pages = accountPages();
    mountPath(router, '/reset-password', { get: [asDocument, pages.resetPassword] });
    mountPath(router, '/verify-email', { get: [asDocument, pages.verifyEmail] });
    mountPath(router, PAGE_ASSET_ROUTE, { get: [asDocument, pages.asset] });
    if (ide) mountPath(router, ide.IDE_ASSET_ROUTE, { get: [asDocument, ide.graphqlIdeAsset] });
  }

  /** GraphiQL for a browser's GET /graphql (not in production); any other request is GraphQL's. */
  function idePage(ide: typeof import('./graphql/ide')): RequestHandler {
    const page = ide.graphqlIde();
    return (req, res, next) => (ide.wantsIde(req) ? asDocument(req, res, () => page(req, res, next)) : next());
  }

  const final = finalHandler({ log: deps.log, metrics });
  const handle: RequestListener = (req, res) => app(req as express.Request, res as express.Response, (err?: unknown) => final(req as express.Request, res as express.Response, err));
  const jobs = services.jobs;
  return {
    app,
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
