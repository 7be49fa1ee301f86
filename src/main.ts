// First: V8 settings that must hold before the service allocates anything (core/heap.ts).
import { releaseMemory, releaseWhenIdle } from './core/heap';
// Second: OpenTelemetry, when tracing is on, before http, express, pg and graphql are required (telemetry.ts).
import './telemetry';
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import { ConfigError, loadConfig, type Config } from './config/config';
import { createPinoLogger, wantsPrettyLogs, type Logger } from './core/logger';
import { EmbeddedPostgresError, startEmbeddedPostgres, type EmbeddedPostgres } from './db/embedded';
import { closeOrm, initOrm, migrateDatabase } from './db/orm';
import { setBcryptCost } from './modules/user/password';
import { niceThreadPool } from './core/threadpool-priority';
import { tracing } from './core/tracing';
import cluster from 'node:cluster';
import { clusterMetrics, followReplicas, jobsWhenChosen, runPrimary, watchParent } from './cluster';
import { announceServiceUrl } from './core/service-url';
import { readRoutingOf } from './db/replicas';

class StartError extends Error {}

/** Development only: a secret generated once and kept with the data, so tokens survive restarts. */
function developmentSecret(config: Config): string {
  const file = join(config.dataDir, 'jwt-secret');
  if (!existsSync(file)) {
    mkdirSync(config.dataDir, { recursive: true });
    writeFileSync(file, randomBytes(48).toString('hex'), { mode: 0o600 });
  }
  return readFileSync(file, 'utf8').trim();
}

async function main(): Promise<void> {
  const started = Date.now();
  let config: Readonly<Config>;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  // First, while nothing else has used libuv's thread pool (its threads are told apart by appearing).
  const niced = await niceThreadPool(config.threadpoolNice);
  // With tracing on, every line written inside a span carries its trace_id and span_id (the request's line included).
  const traces = tracing();
  const root = createPinoLogger({ level: config.logLevel, pretty: wantsPrettyLogs(config.env), mixin: traces && (() => traces.logFields()) });
  // Under WEB_CONCURRENCY > 1 every line says which process wrote it.
  const role = cluster.isWorker ? cluster.worker!.id : config.webConcurrency > 1 ? 'primary' : undefined;
  const log: Logger = role === undefined ? root : root.child({ worker: role });
  traces?.logTo(log);
  if (config.threadpoolNice && !niced) log.warn('could not lower the thread pool priority (THREADPOOL_NICE); hashing competes with requests');
  setBcryptCost(config.bcryptCost);
  const jwtSecret = config.jwtSecret ?? developmentSecret(config);
  if (role === 'primary') return runPrimary(config, log, jwtSecret);

  let embedded: EmbeddedPostgres | undefined;
  let databaseUrl = config.databaseUrl;
  let directUrl = config.databaseDirectUrl;
  if (!databaseUrl || !directUrl) {
    embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, log: (msg) => log.info(msg) });
    databaseUrl = directUrl = embedded.url;
    if (!embedded.shared) log.info({ cluster: embedded.dataDir }, 'embedded PostgreSQL started');
  }

  // A failure from here on must not leave the embedded PostgreSQL running on its own.
  let orm: Awaited<ReturnType<typeof initOrm>> | undefined;
  let built: Awaited<ReturnType<typeof createApp>>;
  let server: Server;
  try {
    if (!cluster.isWorker) await migrateDatabase(directUrl, databaseUrl); // a cluster's primary ran them before forking
    orm = await initOrm({
      clientUrl: databaseUrl, directUrl, namedStatements: config.preparedStatements,
      replicaUrls: config.replicaUrls, replicaMaxLagMs: config.replicaMaxLagMs, poolMax: 20,
      onDriverWarning: (message) => log.warn({ source: 'database driver' }, message),
      // A cluster's primary measures the replicas for every worker (src/cluster.ts).
      replicaStatus: cluster.isWorker ? 'told' : 'measure',
    });
    if (cluster.isWorker) await followReplicas(readRoutingOf(orm));
    const ready = orm;
    const build = () => createApp({ config: { ...config, jwtSecret }, orm: ready, log });
    // With tracing on, building the schema (an introspection query) is not a trace of its own.
    built = await (traces ? traces.quiet(build) : build());
    // The start's garbage (modules' init code, the schema's and metadata's scaffolding) goes back
    // to the system before the first request, not whenever V8 would get to it.
    releaseMemory();
    // The callback also hears a listen error (EADDRINUSE): it must not read as success.
    server = await new Promise((resolve, reject) => {
      const s = built.listen(config.port, config.host, (err?: Error) => (err ? reject(err) : resolve(s)));
    });
  } catch (err) {
    if (orm) await closeOrm(orm).catch(() => undefined);
    await embedded?.stop();
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new StartError(`Port ${config.port} is in use: stop the other process or set PORT.`);
    throw err;
  }
  const db = orm;
  server.keepAliveTimeout = 5_000;
  if (cluster.isWorker) built.metrics.exposition = clusterMetrics(built.metrics.registry);
  let stopping = false;
  // And what a busy period grew, once it is over (MEMORY_RELEASE_IDLE_MS).
  const work = { served: () => built.inFlight.served() + built.subscriptions.handled(), running: () => built.inFlight.running() };
  const stopReleasing = config.memoryReleaseIdleMs > 0 ? releaseWhenIdle(work, config.memoryReleaseIdleMs, (ms) => log.debug({ ms: Math.round(ms) }, 'idle: memory released')) : () => undefined;
  // Once per instance: a cluster's primary chooses the worker that runs them (src/cluster.ts).
  if (cluster.isWorker) jobsWhenChosen(() => !stopping && built.startJobs());
  else built.startJobs();

  // The bound port, not the setting: PORT=0 asks the system for a free one.
  const base = `http://localhost:${(server.address() as AddressInfo).port}`;
  log.info({ rest: `${base}/`, graphql: `${base}/graphql`, docs: `${base}/docs`, metrics: `${base}/metrics`, health: `${base}/healthz`, ready: `${base}/readyz`, startupMs: Date.now() - started, pid: process.pid }, `listening on ${base}`);
  // For the scripts beside it (npm run seed prints it); a cluster's primary says it for its workers.
  const forgetUrl = cluster.isWorker ? () => undefined : announceServiceUrl(config.dataDir, base);

  // The shutdown, one step after another; a new resource adds its step where it belongs.
  const steps: { name: string; run: () => Promise<unknown> }[] = [
    { name: 'service url', run: async () => forgetUrl() },
    { name: 'memory release', run: async () => stopReleasing() },
    // Before http: open WebSockets would hold server.close() until the forced cut.
    // /readyz turns 503 first, and the upgrade refuses new sockets from here on.
    {
      name: 'subscriptions',
      run: () => {
        built.state.draining = true;
        return built.subscriptions.close();
      },
    },
    { name: 'http', run: () => drainHttp(server, built, config.shutdownTimeoutMs) },
    { name: 'app', run: () => built.close() },
    { name: 'orm', run: () => closeOrm(db) },
    { name: 'database', run: async () => embedded?.stop() },
    // Last: the spans of the drain itself are exported too (bounded: the exporter's own timeout).
    { name: 'telemetry', run: async () => traces?.shutdown().catch(() => undefined) },
  ];
  const shutdown = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal: reason }, 'shutting down: draining requests');
    for (const step of steps) {
      await step.run();
      log.debug(`${step.name} closed`);
    }
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  if (config.underNpm && !cluster.isWorker) watchParent(() => void shutdown('npm exited'));
}

/** /readyz turns 503, connections finish (cut at the deadline), then handlers whose clients hung up. */
async function drainHttp(server: Server, built: Awaited<ReturnType<typeof createApp>>, timeoutMs: number): Promise<void> {
  built.state.draining = true;
  const deadline = Date.now() + timeoutMs;
  const forced = setTimeout(() => server.closeAllConnections(), timeoutMs);
  forced.unref();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
  // Connections are gone; handlers whose clients hung up may still be running. Same deadline.
  await Promise.race([built.inFlight.idle(), new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now())).unref())]);
  clearTimeout(forced);
}

main().catch((err) => {
  const message = err instanceof EmbeddedPostgresError || err instanceof StartError ? err.message : (err as Error)?.stack ?? String(err);
  process.stderr.write(`Failed to start: ${message}\n`);
  process.exit(1);
});
