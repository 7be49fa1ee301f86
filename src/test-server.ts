import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { ConfigError, loadConfig } from './config/config';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './db/embedded';
import type { BuiltApp } from './app';
import type { Logger } from './core/logger';
import type { FoundDatabase } from './modules/testing/testing.repository';
import { sweepTestServerDirs, TEST_SERVER_DIR_PREFIX, writeOwner } from './modules/testing/testing.dirs';

/* eslint-disable @typescript-eslint/no-require-imports */
/**
 * The ORM, the app and the logger (which brings the ORM's core) are required once PostgreSQL's
 * initdb runs: loading them takes about a second of CPU, spent while initdb works in its own process.
 */
const late = () => ({
  pino: require('pino') as typeof import('pino'),
  ...(require('./app') as typeof import('./app')),
  ...(require('./core/logger') as typeof import('./core/logger')),
  ...(require('./db/orm') as typeof import('./db/orm')),
  ...(require('./modules/mail/mail.capture') as typeof import('./modules/mail/mail.capture')),
  ...(require('./modules/user/password') as typeof import('./modules/user/password')),
  ...(require('./modules/testing/testing.service') as typeof import('./modules/testing/testing.service')),
  ...(require('./modules/testing/testing.routes') as typeof import('./modules/testing/testing.routes')),
  ...(require('./modules/testing/testing.repository') as typeof import('./modules/testing/testing.repository')),
});
/* eslint-enable @typescript-eslint/no-require-imports */

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

/** npm's pid changes (to 1 or a subreaper) once npm is gone. */
function watchParent(onGone: () => void): void {
  const parent = process.ppid;
  setInterval(() => process.ppid !== parent && onGone(), 1000).unref();
}

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
  let log: Logger | undefined;
  const early: string[] = [];
  const info = (msg: string) => (log ? log.info(msg) : early.push(msg));

  let embedded: EmbeddedPostgres | undefined;
  let orm: MikroORM | undefined;
  let found: FoundDatabase | undefined;
  let built: BuiltApp | undefined;
  let stopping: Promise<void> | undefined;
  let dropCreated: ((orm: MikroORM, found: FoundDatabase) => Promise<void>) | undefined;
  let closeOrm: ((orm: MikroORM) => Promise<void>) | undefined;

  /** Everything this process made, in reverse order; safe to call at any point of the start. */
  const cleanUp = async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await built?.close().catch((err) => log?.warn({ err }, 'closing the app failed'));
    if (orm && found) await dropCreated?.(orm, found).catch((err) => log?.warn({ err }, 'could not drop the tables made in DATABASE_URL'));
    if (orm) await closeOrm?.(orm).catch(() => undefined);
    // The cluster may live outside the directory (the embedded package's fallback for root): resolved before the stop.
    const cluster = embedded && existsSync(join(dir, 'postgres')) ? realpathSync(join(dir, 'postgres')) : undefined;
    await embedded?.stop();
    if (cluster && !cluster.startsWith(`${dir}/`)) rmSync(cluster, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  };
  // eslint-disable-next-line prefer-const -- because `stop` (a signal handler) may read it before the start below assigns it; a const there would throw
  let startup: Promise<void> | undefined;
  const stop = (reason: string) => {
    stopping ??= (async () => {
      log?.info({ reason }, 'test server stopping');
      // A signal during the start: let initdb and PostgreSQL come up first, so they are stopped, not orphaned.
      await startup?.catch(() => undefined);
      await cleanUp();
      process.exit(0);
    })();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // Started by npm, which may die without passing a signal on (SIGKILL): stop with it.
  if (config.underNpm) watchParent(() => stop('npm exited'));

  startup = (async () => {
    // initdb first (a process of its own), then the modules load meanwhile.
    const database = config.databaseUrl ? Promise.resolve(undefined) : startEmbeddedPostgres({ dataDir: dir, log: info, maxConnections: 50, durable: false });
    database.catch(() => undefined);
    const m = late();
    closeOrm = m.closeOrm;
    dropCreated = m.removeCreated;
    log = m.createPinoLogger({ level: config.logLevel, stream: m.pino.destination(2) });
    early.forEach((msg) => log!.info(msg));
    m.setBcryptCost(config.bcryptCost);
    embedded = await database;
    const databaseUrl = embedded?.url ?? config.databaseUrl!;
    const directUrl = embedded?.url ?? config.databaseDirectUrl!;
    orm = await m.initOrm({ clientUrl: databaseUrl, directUrl, namedStatements: config.preparedStatements, poolMax: 10, onDriverWarning: (message) => log!.warn({ source: 'database driver' }, message) });
    if (config.databaseUrl) found = await m.requireEmptyDatabase(orm);
    await m.migrate(orm);
    const mailCapture = new m.CapturedMails();
    const ready = orm;
    built = await m.createApp(
      { config: { ...config, jwtSecret: config.jwtSecret! }, orm: ready, log, mailCapture },
      {
        extend: (app, kit) => {
          const testing = new m.TestingService(ready, kit.services.mail, mailCapture, kit.services.tokens);
          app.use(kit.routes(m.testingRoutes(testing)));
        },
      },
    );
  })();
  try {
    await startup;
  } catch (err) {
    if (stopping) return;
    log?.error({ err }, 'test server failed to start');
    await cleanUp().catch(() => undefined);
    return fail(`failed to start: ${(err as Error).message}`);
  }
  if (stopping || !built) return;
  server.on('request', built.handle);
  built.subscriptions.attach(server);
  built.startJobs();
  process.stdout.write(`${JSON.stringify({ url, graphql: `${url.replace(/^http/, 'ws')}/graphql` })}\n`);
}

void main();
