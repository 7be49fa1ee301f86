import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import { applicationNameOf, ormConfig, STATEMENT_TIMEOUT_MS, type OrmOptions } from '../../mikro-orm.config';
import { useNamedStatements } from './named-statements';
import { runStatement, sql } from './statements';
import { installReadRouting, stopReadRouting, type ReplicaStatusSource } from './replicas';

/**
 * `replicaMaxLagMs`: how far behind a replica may be and still serve reads (REPLICA_MAX_LAG_MS).
 * `replicaStatus`: 'measure' the replicas here (the default), or be 'told' their states (a
 * cluster's worker: src/cluster.ts followReplicas). `namedStatements`: the cached statements run
 * named outside transactions (db/named-statements.ts; on by default). Close it with closeOrm,
 * which also stops the replicas' probes.
 */
export async function initOrm(options: OrmOptions & { replicaMaxLagMs?: number; replicaStatus?: ReplicaStatusSource; namedStatements?: boolean }): Promise<MikroORM> {
  const orm = await MikroORM.init(ormConfig(options));
  directUrls.set(orm, options.directUrl ?? options.clientUrl);
  if (options.namedStatements ?? true) useNamedStatements(orm);
  // MikroORM connects on its first statement; connecting here makes a database that is down
  // fail the start, not the first request.
  await orm.connect();
  await installReadRouting(orm, options.replicaMaxLagMs ?? 1000, applicationNameOf(orm.config), options.replicaStatus, directUrlOf(orm));
  return orm;
}

const directUrls = new WeakMap<MikroORM, string>();

/** The server itself, for what needs a session of its own (LISTEN): the ORM's DATABASE_DIRECT_URL. */
export const directUrlOf = (orm: MikroORM): string => directUrls.get(orm) ?? orm.config.get('clientUrl');

/** Stops what runs beside the ORM (the replicas' probes), then closes it. */
export async function closeOrm(orm: MikroORM, force = true): Promise<void> {
  await stopReadRouting(orm);
  await orm.close(force);
}

/** The migration files shipped beside this module (`.ts` under jest, `.js` once built). */
function migrationFiles(): string[] {
  return readdirSync(join(__dirname, 'migrations'))
    .filter((f) => /^Migration\d.*\.(ts|js)$/.test(f) && !f.endsWith('.d.ts'))
    .map((f) => f.replace(/\.(ts|js)$/, ''));
}

/**
 * Migrates the database at `directUrl` (the server itself) on an ORM of its own, closed before
 * returning. When the service reaches it through a pooler (`pooledUrl`), also makes the
 * statement timeout the default of its role in this database: a pooler passes no setting from
 * the client's connection to the server's (mikro-orm.config.ts).
 */
export async function migrateDatabase(directUrl: string, pooledUrl = directUrl): Promise<void> {
  const orm = await initOrm({ clientUrl: directUrl, poolMax: 2, namedStatements: false });
  try {
    await migrate(orm);
    // ALTER ROLE takes no parameters: the database is named by PostgreSQL itself, the timeout is a constant.
    const alter = `format('alter role current_user in database %I set statement_timeout = %L', current_database(), '${STATEMENT_TIMEOUT_MS}ms')`;
    if (pooledUrl !== directUrl) await runStatement(orm.em.fork(), { sql: `do $$ begin execute ${alter}; end $$`, params: [] });
  } finally {
    await orm.close(true);
  }
}

/**
 * One process migrates at a time (several instances, parallel test workers); the rest wait, then
 * find nothing to do. A database that already has every migration file applied is left alone
 * without loading the migrations themselves.
 */
export async function migrate(orm: MikroORM): Promise<void> {
  const em = orm.em.fork();
  const options = orm.config.get('migrations');
  const table = options.tableName ?? 'mikro_orm_migrations';
  const [found] = await runStatement<{ t: string | null }>(em, sql`select to_regclass(${table}) as t`);
  if (found.t) {
    const applied = new Set((await runStatement<{ name: string }>(em, { sql: `select name from ${found.t}`, params: [] })).map((r) => r.name));
    if (migrationFiles().every((name) => applied.has(name))) return;
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { migrationsList } = require('./migrations') as typeof import('./migrations');
  orm.config.set('migrations', { ...options, migrationsList });
  // The lock is held by this transaction while the migrator runs its own.
  await em.transactional(async (tx) => {
    await runStatement(tx, sql`select pg_advisory_xact_lock(${4711_0001})`);
    await orm.migrator.up();
  });
}
