import { DefaultLogger, type LogContext } from '@mikro-orm/core';

/**
 * The ORM's logger (its `loggerFactory`, mikro-orm.config.ts), which also tells its listeners
 * the pool of every statement the ORM sends: 'primary' for the write connection, the replica's
 * name for a read connection. Every statement goes through the ORM's connection (its queries,
 * flushes, transactions, `execute`; db/statements.ts), and the ORM hands each one to
 * `logQuery` with its connection, whether or not query logging is on, so this counts them all
 * (db/replicas.ts, the metrics' db_queries_total).
 */
export class StatementLog extends DefaultLogger {
  private readonly listeners: ((pool: string) => void)[] = [];

  onStatement(listener: (pool: string) => void): void {
    this.listeners.push(listener);
  }

  override logQuery(context: { query: string; level?: 'info' | 'warning' | 'error' } & LogContext): void {
    if (this.listeners.length) {
      const pool = context.connection?.type === 'read' ? (context.connection.name ?? 'replica') : 'primary';
      for (const l of this.listeners) l(pool);
    }
    super.logQuery(context);
  }
}

