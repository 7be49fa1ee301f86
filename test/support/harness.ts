import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { Client } from 'pg';
import type { MikroORM } from '@mikro-orm/postgresql';
import { createApp, type AppOptions, type BuiltApp } from '../../src/app';
import { loadConfig, type Config } from '../../src/config/config';
import { createPinoLogger, silentLogger, type Logger } from '../../src/core/logger';
import { closeOrm, initOrm, migrateDatabase } from '../../src/db/orm';
import { setBcryptCost } from '../../src/modules/user/password';
import { TEMPLATE_ENV, withDatabase } from './template-database';

export interface TestApp {
  url: string;
  orm: MikroORM;
  built: BuiltApp;
  config: Config;
  databaseUrl: string;
  /** SQL statements run for requests since the last reset (the ORM's query log). */
  sql: string[];
  close(): Promise<void>;
}

/** The pooler's URL of the test database at `direct` (TEST_PG_POOLED_URL names the pooler). */
function pooledUrl(direct: string): string {
  const url = new URL(process.env.TEST_PG_POOLED_URL!);
  url.pathname = new URL(direct).pathname;
  return url.toString();
}

/**
 * A database of its own for one test file, in the run's PostgreSQL: a copy of the run's migrated
 * template (test/support/template-database.ts), or with `empty`, a database with no table at all
 * (for what must find one: the test server's refusal of a used database).
 */
export async function createTestDatabase({ empty = false } = {}): Promise<string> {
  const base = process.env.TEST_PG_URL;
  if (!base) throw new Error('TEST_PG_URL is not set: run the tests through jest (globalSetup starts PostgreSQL)');
  const template = process.env[TEMPLATE_ENV];
  if (!template && !empty) throw new Error(`${TEMPLATE_ENV} is not set: run the tests through jest (globalSetup makes the template)`);
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`create database ${name}${empty ? '' : ` template ${template}`}`);
  } finally {
    await admin.end();
  }
  return withDatabase(base, name);
}

/**
 * Starts the real app on an ephemeral port over a fresh database. Bcrypt cost 4 keeps the suite
 * fast (one test checks the default of 12). `env` overrides settings as the environment would;
 * `opts.log` replaces the silent logger (e.g. a pino logger writing to memory); `opts.config`
 * overrides settings that have no environment variable (job timings).
 */
export async function startTestApp(env: Record<string, string> = {}, opts: { log?: Logger; config?: Partial<Config>; app?: AppOptions } = {}): Promise<TestApp> {
  const databaseUrl = env.DATABASE_URL ?? (await createTestDatabase());
  // Under `npm run test:pooler`, through PgBouncer (test/support/global-setup.ts).
  const pooled = !env.DATABASE_URL && process.env.TEST_PG_POOLED_URL ? pooledUrl(databaseUrl) : undefined;
  const config = {
    ...loadConfig({
      NODE_ENV: 'test',
      JWT_SECRET: 'test-secret-that-is-at-least-32-characters-long',
      BCRYPT_COST: '4',
      AUTH_RATE_LIMIT_PER_MINUTE: '0',
      APP_URL: 'http://app.test',
      ...env,
      ...(pooled ? { DATABASE_URL: pooled, DATABASE_DIRECT_URL: databaseUrl } : { DATABASE_URL: databaseUrl }),
    }),
    mailPollMs: 50,
    mailRetryBaseMs: 100,
    ...opts.config,
  };
  setBcryptCost(config.bcryptCost);
  const sql: string[] = [];
  // Test-only bookkeeping of which statements a request caused: the service itself carries its
  // request state as a plain value (no async context), so the harness marks each request here.
  const inRequest = new AsyncLocalStorage<true>();
  // As src/main.ts starts the service: migrated first (a copy of the template is already: this
  // finds nothing to do, and behind the pooler sets the role's statement timeout), then the serving ORM.
  await migrateDatabase(config.databaseDirectUrl!, config.databaseUrl);
  const orm = await initOrm({
    clientUrl: config.databaseUrl!,
    directUrl: config.databaseDirectUrl,
    namedStatements: config.preparedStatements,
    replicaUrls: config.replicaUrls,
    replicaMaxLagMs: config.replicaMaxLagMs,
    onQuery: (line) => {
      // Only statements run for a request: background jobs (mail outbox polling, retention) run
      // outside any request and would make per-request counts flaky.
      if (!/^\[query\]/.test(line) || !inRequest.getStore()) return;
      sql.push(line);
    },
  });
  sql.length = 0;
  const built = await createApp({ config: { ...config, jwtSecret: config.jwtSecret! }, orm, log: opts.log ?? (process.env.TEST_LOG ? createPinoLogger({ level: process.env.TEST_LOG, stream: process.stderr }) : silentLogger) }, opts.app);
  built.startJobs();
  const server: Server = await new Promise((resolve) => {
    const s = createServer((req, res) => inRequest.run(true, () => built.handle(req, res)));
    // A WebSocket's messages come from its socket, outside any request: each event it emits is
    // marked too, so a subscribe and what it starts (the LISTEN connection, opened by a first
    // subscribe, and so every delivery it triggers) count like a request's statements.
    s.prependListener('upgrade', (_req, socket: Duplex) => {
      const emit = socket.emit;
      socket.emit = function (this: Duplex, ...args: Parameters<Duplex['emit']>) {
        return inRequest.run(true, () => emit.apply(this, args));
      } as Duplex['emit'];
    });
    built.subscriptions.attach(s);
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    orm,
    built,
    config,
    databaseUrl,
    sql,
    async close() {
      // Upgraded sockets are not the HTTP server's to close: without this, close() would wait on them.
      await built.subscriptions.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await built.close();
      await closeOrm(orm);
    },
  };
}
