import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ReadContext } from './context';
import { readStale } from '../db/replicas';

/**
 * Hot reads built by the ORM once per shape, then replayed with each request's values.
 *
 * Compiling a QueryBuilder (metadata, filters, knex) was about a quarter of the service's CPU on
 * GET /posts, yet a statement's SQL depends only on its shape: which conditions, which order,
 * which filters. So the first request of a shape builds it with stand-ins for its numbers; the
 * stand-ins' positions among the compiled bindings say where each later request's numbers go.
 * Every number of a shape must come through `n` (ids, limits, offsets); anything else in the
 * statement (filter conditions, `true`, `null`) is part of the shape. A filter that takes
 * parameters (tenant) must get them through `n` too (the tenant posts build theirs on a fork whose
 * `tenant` parameter is a stand-in); otherwise the key names the filters.
 */
export interface CompiledStatement {
  sql: string;
  bindings: readonly unknown[];
}

type Slot = { value: number } | { constant: unknown };

/**
 * Stand-ins for a shape's numbers while it is built. Positive (knex refuses a negative limit);
 * no constant of a shape is a number (every number comes through `n`), so a binding equal to
 * one is that stand-in.
 */
const STAND_IN_BASE = 1_999_999_000;
const standIn = (i: number) => STAND_IN_BASE + i;
const MAX_SHAPES = 500;

/** The parts of MikroORM's SQL connection used here (executeQuery logs, as every ORM statement is). */
interface OrmConnection {
  getKnex(): { raw(sql: string, bindings: readonly unknown[]): KnexRaw; client: KnexClient; emit(event: 'query', data: object): unknown; listenerCount(event: 'query'): number };
  executeQuery<T>(query: string, cb: () => Promise<T>, context?: object): Promise<T>;
  getPlatform(): { formatQuery(sql: string, params: readonly unknown[]): string };
}
/** knex's pool of pg clients. */
interface KnexClient {
  acquireConnection(): Promise<PgClient>;
  releaseConnection(client: PgClient): unknown;
}
interface PgClient {
  query(config: { name: string; text: string; values: readonly unknown[] }): Promise<{ rows: unknown[] }>;
}
interface KnexRaw extends PromiseLike<{ rows: unknown[] }> {
  options(o: { name: string }): KnexRaw;
  toSQL(): { toNative(): { sql: string } };
  transacting(trx: unknown): KnexRaw;
}

export class StatementShapes {
  private readonly shapes = new Map<string, { sql: string; name: string; slots: Slot[]; native?: string }>();

  /**
   * Rows of the statement of shape `key` for `values`. `build(n)` builds it with the ORM (on the
   * request's fork, `ctx.em`), taking the i-th number as `n(i)`; it runs once per key (and every
   * time past MAX_SHAPES keys). The statement itself runs through `ctx.reader()`, so a request
   * that only reads shapes never forks.
   * `stale`: the request may read slightly stale data (RequestContext.readFrom), so a read
   * replica may answer (db/replicas.ts).
   */
  async rows<R>(ctx: ReadContext, key: string, values: readonly number[], build: (n: (i: number) => number) => Promise<CompiledStatement>, stale = false): Promise<R[]> {
    const em: EntityManager = ctx.reader();
    let shape = this.shapes.get(key);
    if (!shape) {
      const { sql, bindings } = await build(standIn);
      const slots = bindings.map((b): Slot => {
        const i = typeof b === 'number' ? b - STAND_IN_BASE : -1;
        return i >= 0 && i < values.length ? { value: i } : { constant: b };
      });
      // A named prepared statement: PostgreSQL parses and plans it once per connection, and each
      // request sends only its values (MikroORM's execute writes the values into the SQL text,
      // so every request would be parsed and planned anew). The name is the text's digest.
      shape = { sql, slots, name: `s_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}` };
      if (this.shapes.size < MAX_SHAPES) this.shapes.set(key, shape);
    }
    const params = shape.slots.map((s) => ('value' in s ? values[s.value] : s.constant));
    const { sql, name } = shape;
    const current = shape;
    const run = (connection: OrmConnection) => {
      const knex = connection.getKnex();
      // PostgreSQL's own placeholders ($1, ...), once per shape.
      const native = (current.native ??= knex.raw(sql, params).toSQL().toNative().sql);
      const trx = em.getTransactionContext();
      const execute = trx
        ? async () => (await knex.raw(sql, params).options({ name }).transacting(trx)).rows as R[]
        : // Outside a transaction the statement goes straight to a pooled pg client: knex's query
          // builder and runner around one prepared statement cost as much Node CPU as the
          // statement's own round trip (npm run bench, GET /posts/:id). The 'query' event is what
          // knex would emit, so the statement counts per pool (db/replicas.ts) as any other.
          async () => {
            const client = await knex.client.acquireConnection();
            try {
              if (knex.listenerCount('query')) knex.emit('query', { method: 'raw', sql: native, bindings: params });
              return (await client.query({ name, text: native, values: params })).rows as R[];
            } finally {
              void knex.client.releaseConnection(client); // synchronous; the promise it returns is already settled
            }
          };
      const logger = em.config.getLogger();
      if (!logger.isEnabled('query')) return execute();
      // Logged as the ORM logs its own statements: values in place, or PostgreSQL's $n placeholders.
      const logged = logger.isEnabled('query-params') ? connection.getPlatform().formatQuery(sql, params) : native;
      return connection.executeQuery(logged, execute, { query: sql, params, id: em.id });
    };
    try {
      return await (stale ? readStale(em, run) : run(em.getConnection('write') as unknown as OrmConnection));
    } catch (err) {
      // As the ORM's own reads do: a driver error becomes the ORM's exception (codes kept), so
      // callers see one kind of error whichever way a read went (db-outage: a 503 on both surfaces).
      throw em.getDriver().convertException(err as Error);
    }
  }
}

/**
 * Walks a where-object, moving its numbers into `values` and putting `n(i)` in their place: with
 * `() => '#'` it gives the shape's key, with the stand-ins the object to build the shape from.
 */
export function numbersOut(where: unknown, values: number[], n: (i: number) => unknown): unknown {
  if (typeof where === 'number') {
    values.push(where);
    return n(values.length - 1);
  }
  if (Array.isArray(where)) return where.map((w) => numbersOut(w, values, n));
  if (where && typeof where === 'object' && Object.getPrototypeOf(where) === Object.prototype) {
    return Object.fromEntries(Object.entries(where).map(([k, v]) => [k, numbersOut(v, values, n)]));
  }
  return where;
}
