import { createHash } from 'node:crypto';
import type { EntityManager, Knex, AbstractSqlConnection } from '@mikro-orm/postgresql';
import { PRIMARY, readStale, type ReadTarget } from './replicas';

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
 * into the text instead, so every request would be parsed and planned anew. The name reaches pg
 * through knex's documented `Raw.options()`, which its PostgreSQL dialect merges into pg's query
 * config (test/statement-shapes.test.ts fails if it stops doing so).
 *
 * Inside the EntityManager's transaction it runs there; otherwise on the primary, or, when
 * `stale` says the caller may read slightly behind, where db/replicas.ts readStale sends it.
 * It is logged through the ORM's logger as the ORM logs its own statements (tests count them per
 * request), counted per pool by knex's 'query' event like any other, and a driver error becomes
 * the ORM's exception, so callers see one kind of error whichever way a read went.
 */
export async function runPrepared<R>(em: EntityManager, statement: CompiledStatement, options: { name?: string; stale?: boolean } = {}): Promise<R[]> {
  const { sql } = statement;
  const bindings = statement.bindings as Knex.RawBinding[];
  const name = options.name ?? preparedName(sql);
  const trx = em.getTransactionContext<Knex.Transaction>();
  const run = async (connection: AbstractSqlConnection, target: ReadTarget): Promise<R[]> => {
    const query = connection.getKnex().raw(sql, bindings).options({ name });
    if (trx) query.transacting(trx);
    const logger = em.config.getLogger();
    if (!logger.isEnabled('query')) return ((await query) as { rows: R[] }).rows;
    // As the ORM logs its own: values written in, or PostgreSQL's $n placeholders.
    const logged = logger.isEnabled('query-params') ? em.getPlatform().formatQuery(sql, bindings) : query.toSQL().toNative().sql;
    const started = Date.now();
    const connectionInfo = { type: target.type, name: target.name };
    try {
      const { rows } = (await query) as { rows: R[] };
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
