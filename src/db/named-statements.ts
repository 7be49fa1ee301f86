import { hash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Pool } from 'pg';
import type { AbstractSqlConnection, EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { logStatement, type ReadTarget } from './statement-log';

/**
 * The runner's pooled path (runPooled), and named statements for the ones it caches
 * (db/statements.ts cachedStatement). PostgreSQL parses and plans an unnamed statement on every
 * run: for one post's REST answer about 1.2 ms of the primary's CPU against 0.5 ms to run it
 * (docs/performance.md). A named one is parsed once per server connection and, after a few runs,
 * planned once: outside a transaction it runs through MikroORM's own pg pool (the documented
 * `getNativeClient()`) with a `name`, and pg keeps track of which connection parsed which name.
 *
 * A name says what it is: `s_` and the first 20 hex digits of the SHA-256 of the text, so two
 * texts never share one (another build's, during a rolling deploy, included). One that fails
 * because of its name (missing, already there, a plan a migration invalidated) is logged,
 * counted (`db_named_statement_fallbacks_total`) and run again unnamed; pg drops that connection.
 * Behind a transaction-mode pooler a name may meet another connection or another client's: named
 * statements are off there (DATABASE_PREPARED_STATEMENTS, docs/deploy.md).
 */
export interface NamedStatements {
  /** Listens to every fallback (the metric). */
  onFallback(listener: (reason: FallbackReason) => void): void;
}

/** Why a named statement ran unnamed: its SQLSTATE's meaning. */
export type FallbackReason = 'missing' | 'duplicate' | 'invalidated';

const REASONS: Record<string, FallbackReason> = {
  // invalid_sql_statement_name: "prepared statement ... does not exist"
  '26000': 'missing',
  // duplicate_prepared_statement
  '42P05': 'duplicate',
  // feature_not_supported: "cached plan must not change result type" (a column's type changed)
  '0A000': 'invalidated',
};

class NamedStatementsOf implements NamedStatements {
  private readonly listeners: ((reason: FallbackReason) => void)[] = [];

  onFallback(listener: (reason: FallbackReason) => void): void {
    this.listeners.push(listener);
  }

  fellBack(reason: FallbackReason): void {
    for (const l of this.listeners) l(reason);
  }
}

const byDriver = new WeakMap<object, NamedStatementsOf>();
const pools = new WeakMap<AbstractSqlConnection, Pool>();

/** Turns named statements on for `orm` (db/orm.ts initOrm, unless DATABASE_PREPARED_STATEMENTS is off). */
export function useNamedStatements(orm: MikroORM): NamedStatements {
  const named = new NamedStatementsOf();
  byDriver.set(orm.em.getDriver(), named);
  return named;
}

/** Named statements of `orm`, when on. */
export const namedStatementsOf = (orm: MikroORM): NamedStatements | undefined => byDriver.get(orm.em.getDriver());

/** Whether statements of `em`'s ORM run named. */
export const namesStatements = (em: EntityManager): boolean => byDriver.has(em.getDriver());

/** The name of a statement's text. */
export const statementName = (text: string): string => `s_${hash('sha256', text).slice(0, 20)}`;

/**
 * The rows of `statement` on `connection`'s pool (pg's, from MikroORM's `getNativeClient()`):
 * named when it has a `name`, prepared on that connection if it has not been yet; on a failure of
 * the name itself, run again unnamed. Through `pool.query`, whose callback form lets a result die
 * young: pg's promise form (`client.query` without a callback, as Kysely calls it) made nearly
 * every result outlive two young collections under load (test/tricks.test.ts).
 */
export async function runPooled<R>(
  em: EntityManager,
  connection: AbstractSqlConnection,
  target: ReadTarget,
  statement: { name?: string; text: string; sql: string; params: readonly unknown[] },
  quiet = false,
): Promise<R[]> {
  let pool = pools.get(connection);
  if (!pool) pools.set(connection, (pool = (await connection.getNativeClient()) as Pool));
  const { name, text } = statement;
  const start = performance.now();
  try {
    const { rows } = await pool.query(name ? { name, text, values: statement.params as unknown[] } : { text, values: statement.params as unknown[] });
    if (!quiet) logStatement(em, statement, text, target, start, rows.length);
    return rows as R[];
  } catch (err) {
    if (!quiet) logStatement(em, statement, text, target, start, 0, 'error');
    const reason = name ? REASONS[(err as { code?: string }).code ?? ''] : undefined;
    if (!reason) throw em.getDriver().convertException(err as Error);
    em.config.getLogger().warn('info', `named statement ${name} ${reason} (${(err as Error).message}): run unnamed`);
    byDriver.get(em.getDriver())?.fellBack(reason);
    return runPooled(em, connection, target, { ...statement, name: undefined }, quiet);
  }
}
