import 'reflect-metadata';
import express, { type Express } from 'express';
import { expressMiddleware } from '@as-integrations/express5';
import { headerTenantResolver, type TenantResolver } from './core/tenant';
import { AppError } from './core/errors';
import { buildGraphqlSchema } from './graphql/schema';
import { createApolloServer } from './graphql/server';
import { contextMiddleware } from './http/context.middleware';
import { errorHandler, routeGuard, sendError } from './http/error-handler';
import { RouteTable } from './http/routes';
import { databaseReady } from './http/readiness';
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
  startJobs(): void;
  /** Stops jobs and GraphQL; the ORM and the database belong to the caller. */
  close(): Promise<void>;
}

export async function createApp(deps: AppDeps, opts: AppOptions = {}): Promise<BuiltApp> {
  const services = createServices(deps);
  const state = { draining: false };
  const apollo = createApolloServer(await buildGraphqlSchema(services), {
    log: deps.log,
    production: deps.config.env === 'production',
  });
  await apollo.start();

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  const routes = restRoutes(services);
  const table = new RouteTable();
  table.add('/healthz', 'get');
  table.add('/readyz', 'get');
  table.add('/graphql', 'get', 'post');
  for (const r of routes) table.add(r.path, r.method);

  app.use(securityHeaders());
  app.use(corsPolicy(deps.config.corsOrigins));
  app.use(routeGuard(table));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    if (state.draining) return sendError(res, AppError.unavailable());
    if (await databaseReady(deps.orm)) res.json({ status: 'ready' });
    else sendError(res, AppError.unavailable());
  });

  app.use(express.json({ limit: '1mb', strict: false, type: ['application/json', 'application/*+json'] }));
  app.use(contextMiddleware(deps.orm, services.tokens, opts.resolveTenant ?? headerTenantResolver));

  for (const r of routes) app[r.method](r.path, r.handler);
  app.use('/graphql', graphqlRequestGuard());
  app.use(
    '/graphql',
    expressMiddleware(apollo, { context: async ({ res }) => res.locals.ctx as RequestContext }),
  );
  app.use(errorHandler(deps.log));

  const jobs = services.jobs;
  return {
    app,
    services,
    state,
    startJobs: () => jobs.forEach((j) => j.start()),
    async close() {
      await Promise.all(jobs.map((j) => j.stop()));
      await apollo.stop();
    },
  };
}
