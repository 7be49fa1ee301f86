import { performance } from 'node:perf_hooks';
import { DefaultLogger, type LoggerNamespace, type LoggerOptions, type LogContext } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';

/** Where a statement ran, as the ORM's logger names connections: 'primary' or a replica's name (replica-1, ...). */
export interface ReadTarget {
  type: 'read' | 'write';
  name: string;
}
export const PRIMARY: ReadTarget = { type: 'write', name: 'primary' };

/**
 * The ORM's logger (its `loggerFactory`, mikro-orm.config.ts), which also tells its listeners
 * the pool of every statement sent: 'primary' for the write connection, the replica's name for a
 * read connection. MikroORM hands every statement it sends (its queries, flushes, transactions,
 * `execute`) to `logQuery` with its connection, whether or not query logging is on; the
 * statements the service runs itself (db/statements.ts) are handed to it the same way. So this
 * counts them all (db/replicas.ts, the metrics' db_queries_total).
 *
 * MikroORM reports what the driver says of a broken pooled connection as a warning; those go to
 * `onDriverWarning` (the service's log) when given.
 */
export class StatementLog extends DefaultLogger {
  private readonly listeners: ((pool: string) => void)[] = [];

  constructor(
    options: LoggerOptions,
    private readonly onDriverWarning?: (message: string) => void,
  ) {
    super(options);
  }

  onStatement(listener: (pool: string) => void): void {
    this.listeners.push(listener);
  }

  override logQuery(context: { query: string } & LogContext): void {
    if (this.listeners.length) {
      const pool = context.connection?.type === 'read' ? (context.connection.name ?? 'replica') : 'primary';
      for (const l of this.listeners) l(pool);
    }
    super.logQuery(context);
  }

  override warn(namespace: LoggerNamespace, message: string, context?: LogContext): void {
    if (this.onDriverWarning) this.onDriverWarning(message);
    else super.warn(namespace, message, context);
  }
}

/** Hands a statement to the ORM's logger as MikroORM hands its own (Connection.logQuery): every one, logged or not. */
export function logStatement(em: EntityManager, statement: { sql: string; params: readonly unknown[] }, text: string, target: ReadTarget, start: number, results: number, level?: 'error'): void {
  const logger = em.config.getLogger();
  const query = logger.isEnabled('query-params') ? em.getPlatform().formatQuery(statement.sql, statement.params as unknown[]) : text;
  logger.logQuery({ query, params: statement.params, took: Math.round(performance.now() - start), results, level, connection: target });
}

