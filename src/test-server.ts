import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { createApp } from './app';
import { ConfigError, loadConfig } from './config/config';
import { createPinoLogger } from './core/logger';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './db/embedded';
import { closeOrm, initOrm, migrate } from './db/orm';
import { CapturedMails } from './modules/mail/mail.capture';
import { setBcryptCost } from './modules/user/password';
import { watchParent } from './cluster';
import { TestingService } from './modules/testing/testing.service';
import { testingRoutes } from './modules/testing/testing.routes';
import { removeCreated, requireEmptyDatabase, type FoundDatabase } from './modules/testing/testing.database';
import { sweepTestServerDirs, TEST_SERVER_DIR_PREFIX, writeOwner } from './modules/testing/testing.dirs';

/**
 * `npm run test-server`: a throwaway instance for client teams' integration tests. A fresh
 * embedded PostgreSQL in a new temporary directory (or DATABASE_URL, which must be empty), a free
 * port unless PORT is set, fast settings, mails captured in memory, and the /__test routes.
 * Once it serves, stdout carries exactly one line, {"url":…,"graphql":…}; everything else goes
 * to stderr. SIGTERM or SIGINT stops it and removes all it created.
 */
const fail = (message: string): never => {
  process.stderr.write(`test-server: ${message}\n`);
  process.exit(1);
};

async function main(): Promise<void> {
  if (process.env.NODE_ENV === 'production') fail('refusing to start with NODE_ENV=production: this server empties its database on request and keeps mails instead of sending them.');
  // Fast by default, each overridable: bcrypt's lowest cost, no auth rate limits, logs from warnings up.
  const defaults: Record<string, string> = { NODE_ENV: 'test', HOST: '127.0.0.1', BCRYPT_COST: '4', AUTH_RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn', THREADPOOL_NICE: '0' };
  for (const [k, v] of Object.entries(defaults)) if (!process.env[k]) process.env[k] = v;

  // The port first (0 asks the system for a free one) so that APP_URL, the links in the mails, names it.
  const server: Server = createServer();
  const host = process.env.HOST!;
  const wantedPort = process.env.PORT ? Number(process.env.PORT) : 0;
  if (!Number.isInteger(wantedPort) || wantedPort < 0 || wantedPort > 65535) fail(`PORT: must be a whole number from 0 to 65535 (got ${process.env.PORT})`);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(wantedPort, host, () => resolve());
  }).catch((err: NodeJS.ErrnoException) => fail(err.code === 'EADDRINUSE' ? `port ${wantedPort} is in use: stop the other process or leave PORT unset.` : err.message));
  const port = (server.address() as AddressInfo).port;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const url = `http://${urlHost}:${port}`;
  process.env.PORT = String(port);
  process.env.APP_URL ||= url;
  process.env.JWT_SECRET ||= randomBytes(48).toString('hex');

  sweepTestServerDirs();
  const dir = mkdtempSync(join(tmpdir(), TEST_SERVER_DIR_PREFIX));
  // Traversable (not listable) by others: as root, PostgreSQL runs as `postgres` and its cluster lives in here.
  chmodSync(dir, 0o711);
  writeOwner(dir);
  process.env.DATA_DIR = dir;

  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return fail(err instanceof ConfigError ? err.message : String(err));
  }
  const log = createPinoLogger({ level: config.logLevel, stream: pino.destination(2) });
  setBcryptCost(config.bcryptCost);

  let embedded: EmbeddedPostgres | undefined;
  let orm: Awaited<ReturnType<typeof initOrm>> | undefined;
  let found: FoundDatabase | undefined;
  let built: Awaited<ReturnType<typeof createApp>> | undefined;
  let stopping: Promise<void> | undefined;

  /** Everything this process made, in reverse order; safe to call at any point of the start. */
  const cleanUp = async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await built?.close().catch((err) => log.warn({ err }, 'closing the app failed'));
    if (orm && found) await removeCreated(orm, found).catch((err) => log.warn({ err }, 'could not drop the tables made in DATABASE_URL'));
    if (orm) await closeOrm(orm).catch(() => undefined);
    // The cluster may live outside the directory (the embedded package's fallback for root): resolved before the stop.
    const cluster = embedded && existsSync(join(dir, 'postgres')) ? realpathSync(join(dir, 'postgres')) : undefined;
    await embedded?.stop();
    if (cluster && !cluster.startsWith(`${dir}/`)) rmSync(cluster, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  };
  const stop = (reason: string) => {
    stopping ??= (async () => {
      log.info({ reason }, 'test server stopping');
      await cleanUp();
      process.exit(0);
    })();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // Started by npm, which may die without passing a signal on (SIGKILL): stop with it.
  if (config.underNpm) watchParent(() => stop('npm exited'));

  try {
    let databaseUrl = config.databaseUrl;
    if (!databaseUrl) {
      embedded = await startEmbeddedPostgres({ dataDir: dir, log: (msg) => log.info(msg), maxConnections: 50 });
      databaseUrl = embedded.url;
    }
    orm = await initOrm({ clientUrl: databaseUrl, poolMax: 10, onDriverWarning: (message) => log.warn({ source: 'knex' }, message) });
    if (config.databaseUrl) found = await requireEmptyDatabase(orm);
    await migrate(orm);
    const mailCapture = new CapturedMails();
    const ready = orm;
    built = await createApp(
      { config: { ...config, jwtSecret: config.jwtSecret! }, orm: ready, log, mailCapture },
      {
        extend: (app, kit) => {
          const testing = new TestingService(ready, kit.services.mail, mailCapture, kit.services.tokens);
          app.use(kit.routes(testingRoutes(testing)));
        },
      },
    );
  } catch (err) {
    log.error({ err }, 'test server failed to start');
    await cleanUp().catch(() => undefined);
    return fail(`failed to start: ${(err as Error).message}`);
  }
  if (stopping) return;
  server.on('request', built.handle);
  built.subscriptions.attach(server);
  built.startJobs();
  process.stdout.write(`${JSON.stringify({ url, graphql: `${url.replace(/^http/, 'ws')}/graphql` })}\n`);
}

void main();
