import 'reflect-metadata';
import { defineConfig, type Options } from '@mikro-orm/postgresql';
import { entities } from './src/db/entities';
import { ListTotalsFlushes } from './src/db/list-totals';
import { StatementLog } from './src/db/statement-log';
import { prepareNamed } from './src/db/statements';

export interface OrmOptions {
  clientUrl: string;
  /** Read replicas, named replica-1, replica-2, ...: MikroORM's read connection picks one, db/replicas.ts says whether a read takes it. */
  replicaUrls?: string[];
  /** Receives every SQL statement (tests count them per request). */
  onQuery?: (sql: string) => void;
  poolMax?: number;
  /**
   * Receives the driver's (knex's) own warnings, such as a pooled connection that broke when a
   * database or replica went away; without it they go to the console as plain text.
   */
  onDriverWarning?: (message: string) => void;
  /** Log statements with their parameters written in (bench/explain.ts replays them); never in the service. */
  inlineParams?: boolean;
  /** PostgreSQL's application_name for this ORM's connections; by default one of its own (applicationNameOf). */
  applicationName?: string;
}

let ormsMade = 0;
/**
 * `blog-api:<pid>:<n>`: the n-th ORM of this process. /metrics counts this ORM's connections in
 * pg_stat_activity by it (http/metrics.ts), so no two ORMs, in one process or in several (a
 * cluster's workers, other instances), may share one.
 */
const defaultApplicationName = () => `blog-api:${process.pid}:${++ormsMade}`;

/** The application_name an ORM's connections carry (set by ormConfig). */
export function applicationNameOf(config: { get(key: 'driverOptions'): Record<string, unknown> }): string | undefined {
  return (config.get('driverOptions')?.connection as { application_name?: string } | undefined)?.application_name;
}

/** The ORM settings for the service, the tests and the scripts alike. */
export function ormConfig({ clientUrl, replicaUrls = [], onQuery, onDriverWarning, poolMax = 10, inlineParams = false, applicationName = defaultApplicationName() }: OrmOptions): Options {
  return defineConfig({
    clientUrl,
    replicas: replicaUrls.map((url, i) => ({ name: `replica-${i + 1}`, clientUrl: url })),
    // MikroORM's read connection (a replica at random) serves only the reads that ask for one,
    // and only while db/replicas.ts finds that replica in use (readStale); every other
    // read stays on the primary, so a caller never reads behind its own writes.
    preferReadReplicas: false,
    entities,
    discovery: { disableDynamicFileAccess: true },
    // Requests use their own fork; touching the global EntityManager is a bug we want to hear about.
    allowGlobalContext: false,
    forceUtcTimezone: true,
    // afterCreate: every new connection prepares the hot reads' named statements (db/statements.ts).
    pool: { min: 0, max: poolMax, idleTimeoutMillis: 10_000, afterCreate: prepareNamed },
    // Fail fast instead of queueing forever when PostgreSQL is down or hung: requests then get
    // 503 (core/errors.ts isConnectionError) and /readyz turns 503 too. The replicas' connections
    // get the same options (MikroORM copies driverOptions to each).
    driverOptions: {
      acquireConnectionTimeout: 5000,
      connection: { connectionTimeoutMillis: 3000, statement_timeout: 30_000, query_timeout: 35_000, application_name: applicationName },
      ...(onDriverWarning ? { log: { warn: onDriverWarning, error: onDriverWarning, deprecate: onDriverWarning, debug: () => undefined } } : {}),
    },
    // The migrator and the migrations list are loaded by db/orm.ts migrate() when a migration is
    // pending, not here: @mikro-orm/migrations brings umzug and its CLI's dependencies (about 3 MB of
    // V8 heap) that a service whose database is up to date never uses.
    migrations: {
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      tableName: 'mikro_orm_migrations',
    },
    debug: onQuery ? (inlineParams ? ['query', 'query-params'] : ['query']) : false,
    colors: false,
    logger: onQuery ? (message: string) => onQuery(message) : () => undefined,
    // A flush that changes what pages count forgets the counted totals (db/list-totals.ts).
    subscribers: [new ListTotalsFlushes()],
    // Also counts every statement per pool (db/replicas.ts, /metrics).
    loggerFactory: (options) => new StatementLog(options),
  });
}
