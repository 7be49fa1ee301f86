import { createHash } from 'node:crypto';
import { Pool } from 'pg';
import type { EntityManager, Knex, AbstractSqlConnection, MikroORM } from '@mikro-orm/postgresql';
import { countStatement, PRIMARY, readStale, type ReadTarget } from './replicas';

/** A statement the ORM compiled: knex's `?` placeholders and their values. */
export interface CompiledStatement {
  sql: string;
  bindings: readonly unknown[];
}

/**
 * The name a statement is prepared under: its text's digest, so the same text always gets the
 * same name (pg refuses one name for two texts on a connection) and two texts never share one.
 */
export function preparedName(sql: string): string {
  return `s_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
}

/**
 * Rows of `statement`, sent as a named prepared statement: PostgreSQL parses and plans it once
 * per connection, and later runs send only the values. MikroORM's `execute` writes the values
 * into the text instead, so every request would be parsed and planned anew.
 *
 * Where it runs:
 * - inside the EntityManager's transaction, there (knex's documented `Raw.transacting()`);
 * - a read that may be slightly behind (`stale`) with replicas configured: on the connection
 *   db/replicas.ts readStale picks (MikroORM's read connection, or the primary);
 * - anything else, on a pg Pool of the service's own beside the ORM's (statementPool): the same
 *   server, credentials, timeouts and application_name, so /metrics counts it with the ORM's.
 *   Through knex's query runner the same statement cost about 40 µs more Node CPU per request
 *   (GET /posts/:id, docs/performance.md), a fifth of what that answer costs.
 * Through knex the name reaches pg by the documented `Raw.options()`, which its PostgreSQL dialect
 * merges into pg's query config (test/statement-shapes.test.ts fails if it stops doing so).
 * Every statement is logged through the ORM's logger as the ORM logs its own (tests count them
 * per request), and a driver error becomes the ORM's exception, so callers see one kind of error
 * whichever way a read went.
 */
export async function runPrepared<R>(em: EntityManager, statement: CompiledStatement, options: { name?: string; native?: string; stale?: boolean } = {}): Promise<R[]> {
  const { sql } = statement;
  const bindings = statement.bindings as Knex.RawBinding[];
  const name = options.name ?? preparedName(sql);
  const trx = em.getTransactionContext<Knex.Transaction>();
  const run = async (connection: AbstractSqlConnection, target: ReadTarget): Promise<R[]> => {
    const own = trx || target !== PRIMARY ? undefined : statementPool(em);
    // Counted per pool like the statements knex sends (db_queries_total).
    if (own) countStatement(em, 'primary');
    const execute = own
      ? async () => (await own.query({ name, text: options.native ?? nativeSql(connection, sql, bindings), values: bindings as unknown[] })).rows as R[]
      : async () => {
          const query = connection.getKnex().raw(sql, bindings).options({ name });
          if (trx) query.transacting(trx);
          return ((await query) as { rows: R[] }).rows;
        };
    const logger = em.config.getLogger();
    if (!logger.isEnabled('query')) return execute();
    // As the ORM logs its own: values written in, or PostgreSQL's $n placeholders.
    const logged = logger.isEnabled('query-params') ? em.getPlatform().formatQuery(sql, bindings) : nativeSql(connection, sql, bindings);
    const started = Date.now();
    const connectionInfo = { type: target.type, name: target.name };
    try {
      const rows = await execute();
      logger.logQuery({ level: 'info', query: logged, params: bindings, took: Date.now() - started, results: rows.length, connection: connectionInfo });
      return rows;
    } catch (err) {
      logger.logQuery({ level: 'error', query: logged, params: bindings, took: Date.now() - started, connection: connectionInfo });
      throw err;
    }
  };
  try {
    return await (options.stale && !trx ? readStale(em, run) : run(em.getConnection('write'), PRIMARY));
  } catch (err) {
    throw em.getDriver().convertException(err as Error);
  }
}

/** The statement with PostgreSQL's own placeholders ($1, ...), as knex writes it. */
export function nativeSql(connection: AbstractSqlConnection, sql: string, bindings: readonly unknown[]): string {
  return connection.getKnex().raw(sql, bindings as Knex.RawBinding[]).toSQL().toNative().sql;
}

const pools = new WeakMap<object, Pool>();

/**
 * The ORM's own pool for prepared reads on the primary, made on first use (a script that never
 * reads this way never opens it) from the ORM's public connection options: server, credentials,
 * MikroORM's type parsers (timestamps stay text, as in its own rows), pool size, timeouts and
 * application_name. Idle connections do not keep the process alive; closeOrm ends it.
 */
function statementPool(em: EntityManager): Pool {
  const driver = em.getDriver();
  let pool = pools.get(driver);
  if (!pool) {
    const { host, port, user, password, database, types } = em.getConnection('write').getConnectionOptions() as Record<string, never>;
    const poolOptions = em.config.get('pool') ?? {};
    // The driver options' connection settings (timeouts, application_name: mikro-orm.config.ts), as knex's pool gets them.
    const connection = (em.config.get('driverOptions')?.connection ?? {}) as Record<string, unknown>;
    pool = new Pool({ host, port, user, password, database, types, ...connection, max: poolOptions.max ?? 10, idleTimeoutMillis: poolOptions.idleTimeoutMillis ?? 10_000, allowExitOnIdle: true });
    // A pooled connection cut while idle (PostgreSQL restarted): pg drops it; the next query opens another.
    pool.on('error', () => undefined);
    pools.set(driver, pool);
  }
  return pool;
}

/** Ends the ORM's statement pool, if it made one (db/orm.ts closeOrm). */
export async function endStatementPool(orm: MikroORM): Promise<void> {
  const pool = pools.get(orm.em.getDriver());
  pools.delete(orm.em.getDriver());
  await pool?.end();
}
