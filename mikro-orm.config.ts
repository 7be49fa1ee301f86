import 'reflect-metadata';
import { ReflectMetadataProvider } from '@mikro-orm/decorators/legacy';
import { Migrator } from '@mikro-orm/migrations';
import { defineConfig, type Options } from '@mikro-orm/postgresql';
import { entities } from './src/db/entities';
import { ListTotalsFlushes } from './src/db/list-totals';
import { StatementLog } from './src/db/statement-log';

export interface OrmOptions {
  clientUrl: string;
  /**
   * The server itself when `clientUrl` is a pooler (DATABASE_DIRECT_URL): what needs a session
   * uses it (LISTEN, migrations; db/orm.ts directUrlOf). Defaults to `clientUrl`.
   */
  directUrl?: string;
  /** Read replicas, named replica-1, replica-2, ...: MikroORM's read connection picks one, db/replicas.ts says whether a read takes it. */
  replicaUrls?: string[];
  /** Receives every SQL statement (tests count them per request). */
  onQuery?: (sql: string) => void;
  poolMax?: number;
  /**
   * Receives the driver's own warnings, such as a pooled connection that broke when a database or
   * replica went away (MikroORM hands them to its logger's `warn`); without it they are dropped.
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
export function applicationNameOf(config: { get(key: 'driverOptions'): unknown }): string | undefined {
  return (config.get('driverOptions') as { application_name?: string } | undefined)?.application_name;
}

/** How long a pooled connection may stay idle before the pool closes it. */
const POOL_IDLE_MS = 60_000;

/** How long a statement may run: a pooled connection's role default (db/orm.ts), a direct one's own setting. */
export const STATEMENT_TIMEOUT_MS = 30_000;

/** The ORM settings for the service, the tests and the scripts alike. */
export function ormConfig({ clientUrl, directUrl = clientUrl, replicaUrls = [], onQuery, onDriverWarning, poolMax = 10, inlineParams = false, applicationName = defaultApplicationName() }: OrmOptions): Options {
  // A pooler refuses settings sent when a connection opens (PgBouncer: "unsupported startup
  // parameter"); behind one, statement_timeout is the role's default in this database instead.
  const pooled = directUrl !== clientUrl;
  return defineConfig({
    clientUrl,
    replicas: replicaUrls.map((url, i) => ({ name: `replica-${i + 1}`, clientUrl: url })),
    // MikroORM's read connection (a replica at random) serves only the reads that ask for one,
    // and only while db/replicas.ts finds that replica in use (readStale); every other
    // read stays on the primary, so a caller never reads behind its own writes.
    preferReadReplicas: false,
    entities,
    // The entities' decorators are TypeScript's (experimentalDecorators); their types come from
    // the compiler's design-time metadata.
    metadataProvider: ReflectMetadataProvider,
    // A new entity's nullable properties start as null, not undefined: their types say `T | null`
    // (defineEntity's strictNullable), and code such as `deletedAt !== null` relies on it.
    initNullableProperties: true,
    // Registered here rather than found by MikroORM, which resolves @mikro-orm/migrations at run time.
    extensions: [Migrator],
    // Requests use their own fork; touching the global EntityManager is a bug we want to hear about.
    allowGlobalContext: false,
    forceUtcTimezone: true,
    // An idle connection is kept for a minute, not pg's default 10 s: each new one costs the
    // primary a backend start, cold catalog caches and new plans of the named statements. After
    // a 15 s pause, 5 s of GET /posts/:id cost PostgreSQL 0.52 ms per request with 10 s and
    // 0.47 ms with a long timeout (docs/performance.md).
    pool: { min: 0, max: poolMax, idleTimeoutMillis: POOL_IDLE_MS },
    // Fail fast instead of queueing forever when PostgreSQL is down or hung: requests then get
    // 503 (core/errors.ts isConnectionError) and /readyz turns 503 too. pg's pool options: its
    // connectionTimeoutMillis also bounds the wait for a free connection. A statement's own run is
    // bounded by the server (statement_timeout), and a server that went away under an open
    // connection by TCP keepalive. No client-side query_timeout: pg arms a timer per query for it,
    // and under load that made every result outlive two young collections (test/tricks.test.ts).
    // The replicas' connections get the same options (MikroORM copies driverOptions to each).
    driverOptions: {
      connectionTimeoutMillis: 5000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      application_name: applicationName,
      ...(pooled ? {} : { statement_timeout: STATEMENT_TIMEOUT_MS }),
    },
    // The tables' triggers are the migrations' own (deferred constraint triggers, which MikroORM's
    // trigger definitions cannot express): the schema diff leaves them alone.
    schemaGenerator: { ignoreTriggers: true },
    // The migrations list is loaded by db/orm.ts migrate() when a migration is pending.
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
    // Also counts every statement per pool (db/replicas.ts, /metrics) and passes on the driver's warnings.
    loggerFactory: (options) => new StatementLog(options, onDriverWarning),
  });
}
