import type { AbstractSqlConnection, EntityManager, QueryBuilder } from '@mikro-orm/postgresql';
import { readStale } from './replicas';

/**
 * The one way the service runs a statement it built itself, and the one cache of compiled
 * statements.
 *
 * Run: `runStatement` hands SQL with `?` placeholders and its values to the ORM's connection
 * (`execute`, in the EntityManager's transaction when there is one), as `em.execute` does: the
 * ORM escapes the values into the statement, logs it, and its exceptions are the ORM's. A read
 * that may be slightly stale goes to the connection db/replicas.ts picks.
 *
 * Cache: building a QueryBuilder (metadata, filters, compiling) costs more Node CPU than the rest
 * of a small read, yet a statement's text depends only on its shape. So a builder that runs on
 * every request declares each request value as `param(i)` where the value goes (a where-object,
 * an `in` list, a raw condition's values) and everything else is the shape. The one key rule:
 * a cached statement's key is the builder's shape name PLUS the parameters of every ORM filter
 * of the EntityManager it is built on (`em.getFilterParams`), so a filter whose condition takes
 * a value per request (the tenant) yields one entry per value, and no request ever runs a
 * statement built with another request's filter values. A value that is neither a declared
 * parameter nor a filter's must be named by the shape (constants such as a page size).
 *
 * Named: PostgreSQL parses and plans an unnamed statement on every run, a named (prepared) one
 * once per connection, and MikroORM 6 sends every statement unnamed. So the hot reads' statements
 * are compiled at start-up, before the ORM opens its first connection (`nameStatements`, from
 * db/orm.ts initOrm with `named`), each gets a name, and the set is sealed; the pool's
 * `afterCreate` hook (`prepareNamed`, mikro-orm.config.ts) PREPAREs the whole set on every
 * connection it creates, all of which are created after the seal. A run of a named statement
 * outside a transaction, on the primary, sends `execute <name>(values)` through the same
 * `execute`. Only a key without filter parameters is named (the start-up compiles on the root
 * EntityManager), so a filter's per-request value is always a value of the plain statement.
 */

/** SQL with `?` placeholders and its values, in order: what the ORM's `execute` takes. */
export interface Statement {
  sql: string;
  params: readonly unknown[];
  /** Set when every connection of the pool has this statement prepared (see Named). */
  named?: Named;
  /** With `named`: the request's values, the prepared statement's $1, $2, ... */
  namedParams?: readonly unknown[];
}

/**
 * A statement prepared on every connection the pool creates: `name`, and its text, in which the
 * request's values (the declared parameters) are $1, $2, ... and the shape's own values (a page
 * size, a filter's constant) are literals, as the ORM writes them into a plain statement. So
 * PostgreSQL's generic plan knows them: with a page's LIMIT as a parameter it guessed 10% of the
 * table and hash-joined every user (docs/performance.md).
 */
interface Named {
  name: string;
  text: string;
  /** How many request values it takes. */
  count: number;
  /** `execute <name>(?, ...)`: what a run sends, with the request's values for its placeholders. */
  execute: string;
  /** Its PREPARE failed somewhere (a parameter whose type PostgreSQL cannot infer): run it plain. */
  dropped: boolean;
}

/** The place of the request's `index`-th value in a statement being built (see cachedStatement). */
export class Param {
  constructor(readonly index: number) {}
}

export const param = (index: number): Param => new Param(index);

/**
 * A QueryBuilder's statement in the form `execute` takes: its getQuery() numbers the
 * placeholders PostgreSQL's way ($1, $2, ... in order of appearance), getParams() gives their
 * values in that order. Every value of a QueryBuilder is a bound parameter, so the text holds no
 * other `$n`.
 */
export function statementOf(qb: Pick<QueryBuilder<never>, 'getQuery' | 'getParams'>): Statement {
  return { sql: qb.getQuery().replace(/\$\d+/g, '?'), params: qb.getParams() };
}

/** The rows of `statement`, run by the ORM's connection in `em`'s transaction, if any. */
export async function runStatement<R>(em: EntityManager, statement: Statement, options: { stale?: boolean } = {}): Promise<R[]> {
  const trx = em.getTransactionContext();
  const primary = em.getConnection('write');
  const run = async (connection: AbstractSqlConnection) => {
    const named = trx || connection !== primary ? undefined : executable(statement);
    if (!named) return connection.execute<R[]>(statement.sql, statement.params as unknown[], 'all', trx);
    try {
      return await connection.execute<R[]>(named, statement.namedParams as unknown[], 'all');
    } catch (err) {
      // Not prepared on this connection after all (every connection prepares the whole set when
      // it is created, so this is a safety net): the plain statement answers, and the name is retired.
      if ((err as { code?: string }).code !== INVALID_STATEMENT_NAME) throw err;
      statement.named!.dropped = true;
      return connection.execute<R[]>(statement.sql, statement.params as unknown[], 'all');
    }
  };
  try {
    return await (options.stale && !trx ? readStale(em, run) : run(primary));
  } catch (err) {
    throw em.getDriver().convertException(err as Error);
  }
}

const INVALID_STATEMENT_NAME = '26000';

/** `execute <name>(?, ...)` for a named statement whose values `execute` can write as literals, else undefined. */
function executable({ named, namedParams = [] }: Statement): string | undefined {
  if (!named || named.dropped) return undefined;
  for (const v of namedParams) if (!literal(v)) return undefined;
  return named.execute;
}

/** A value the ORM writes into a statement as a plain SQL literal. */
const literal = (v: unknown): boolean => v === null || typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean';

const naming = { open: false, sealed: false, openedWhileNaming: 0, set: [] as Named[] };

/**
 * Names every statement `compile` builds on the root EntityManager (through cachedStatement),
 * then seals the set, once per process: a later ORM's connections prepare the same set. It must
 * run before the ORM's pool opens its first connection (db/orm.ts initOrm): a connection opened
 * earlier would lack the names. `compile` builds statements and never runs one; if one ran, a
 * connection opened while naming, and the start-up fails.
 */
export async function nameStatements(compile: () => Promise<void>): Promise<void> {
  if (naming.sealed) return;
  naming.open = true;
  try {
    await compile();
  } finally {
    naming.open = false;
    naming.sealed = true;
  }
  if (naming.openedWhileNaming) throw new Error('a statement ran while the hot statements were being named');
}

/** The text a named statement was prepared with ($n placeholders), for a reader of the statement log. */
export const namedStatementText = (name: string): string | undefined => naming.set.find((n) => n.name === name)?.text;

/** What the pool hands `afterCreate`: a pg client (only its callback `query` is used). */
interface NewConnection {
  query(text: string, callback: (err: Error | null) => void): void;
}

/**
 * The pool's `afterCreate` hook (MikroORM's `pool` option): PREPAREs every named statement on the
 * new connection before the pool hands it out, all in one message. PostgreSQL runs the
 * statements of one simple query as one implicit transaction, so a new connection costs the
 * primary one transaction, not one per statement (an idle instance's pool opens and closes
 * connections: test/quiet-primary.test.ts counts them). If PostgreSQL refuses one, it starts
 * over one statement at a time and drops the refused one from the set (it then runs plain
 * everywhere); the connection itself is still good.
 */
export function prepareNamed(connection: NewConnection, done: (err: Error | null, connection: NewConnection) => void): void {
  if (naming.open) naming.openedWhileNaming++;
  const pending = naming.set.filter((n) => !n.dropped);
  if (!pending.length) return done(null, connection);
  const prepare = (n: Named) => `prepare ${n.name} as ${n.text}`;
  connection.query(pending.map(prepare).join(';\n'), (err) => {
    if (!err) return done(null, connection);
    const next = (i: number): void => {
      if (i === pending.length) return done(null, connection);
      connection.query(prepare(pending[i]), (e) => {
        if (e) pending[i].dropped = true;
        next(i + 1);
      });
    };
    // Whatever the failed message prepared before the refused statement goes first.
    connection.query('deallocate all', () => next(0));
  });
}

interface Compiled {
  sql: string;
  named?: Named;
  /** Each value of the statement: a declared Param (the request's value goes there) or a value of the shape. */
  slots: readonly unknown[];
}

const compiled = new Map<string, Compiled>();
const MAX_COMPILED = 2000;
const filterNames = new WeakMap<object, string[]>();

/** The names of every filter the ORM knows (the entities' and the configuration's), once per ORM. */
function filtersOf(em: EntityManager): string[] {
  const metadata = em.getMetadata();
  let names = filterNames.get(metadata);
  if (!names) {
    const all = new Set(Object.keys(em.config.get('filters') ?? {}));
    for (const meta of Object.values(metadata.getAll())) for (const name of Object.keys(meta.filters ?? {})) all.add(name);
    names = [...all].sort();
    filterNames.set(metadata, names);
  }
  return names;
}

/**
 * The key rule: the shape, and the parameters of every filter of `em`. The ORM's root
 * EntityManager (`em.global`: a request that has not forked yet reads through it) carries none:
 * MikroORM keeps filter parameters per fork and refuses them on the root outside a context.
 */
export function statementKey(em: EntityManager, shape: string): string {
  let key = shape;
  if (em.global) return key;
  for (const name of filtersOf(em)) {
    const params = em.getFilterParams(name);
    if (params !== undefined) key += `\u0000${name}=${JSON.stringify(params)}`;
  }
  return key;
}

/**
 * The statement of `shape` on `em` with this request's `values`: `build(em)` builds it on `em`
 * (so with `em`'s filters and their parameters), putting `param(i)` where `values[i]` goes; it
 * runs once per key (statementKey). The values are bound as the declared parameters, never
 * looked for among the built statement's values.
 */
export async function cachedStatement(em: EntityManager, shape: string, values: readonly unknown[], build: (em: EntityManager) => Promise<Statement>): Promise<Statement> {
  const key = statementKey(em, shape);
  let entry = compiled.get(key);
  if (!entry) {
    // On the root, built on a fork of it: no filter parameters either, as the key says.
    const built = await build(em.global ? em.fork() : em);
    entry = { sql: built.sql, slots: built.params, named: naming.open && key === shape ? nameOf(em, built) : undefined };
    if (compiled.size >= MAX_COMPILED) for (const [k, e] of compiled) if (!e.named) compiled.delete(k);
    compiled.set(key, entry);
  }
  const params = entry.slots.map((slot) => {
    if (!(slot instanceof Param)) return slot;
    if (slot.index >= values.length) throw new Error(`statement ${shape}: no value for parameter ${slot.index}`);
    return values[slot.index];
  });
  if (!entry.named) return { sql: entry.sql, params };
  return { sql: entry.sql, params, named: entry.named, namedParams: values.slice(0, entry.named.count) };
}

/**
 * The named form of a built statement (see Named): each declared parameter `param(i)` becomes
 * $i+1, every other value a literal written by the ORM's platform. Not named (undefined) when its
 * placeholders do not match its values, when a value is no plain literal, or when the declared
 * parameters skip an index (PostgreSQL could not type the missing one).
 */
function nameOf(em: EntityManager, built: Statement): Named | undefined {
  const platform = em.getPlatform();
  const used = new Set<number>();
  let i = 0;
  let failed = false;
  const text = built.sql.replace(/\?/g, () => {
    const slot = built.params[i++];
    if (slot instanceof Param) {
      used.add(slot.index);
      return `$${slot.index + 1}`;
    }
    if (!literal(slot)) failed = true;
    return platform.formatQuery('?', [slot]);
  });
  const count = used.size;
  if (failed || i !== built.params.length || [...used].some((index) => index >= count)) return undefined;
  const name = `hot_${naming.set.length + 1}`;
  const execute = count ? `execute ${name}(${Array.from({ length: count }, () => '?').join(', ')})` : `execute ${name}`;
  const named: Named = { name, text, count, execute, dropped: false };
  naming.set.push(named);
  return named;
}

/**
 * The shape of a where-object as a key: its numbers moved into `values` (in the order
 * numbersOut moves them) and written `#`, everything else (booleans, nulls, strings: part of
 * the shape) as JSON. One pass and one string, since every read of a hot list computes it.
 */
export function shapeKey(where: unknown, values: unknown[]): string {
  if (typeof where === 'number') {
    values.push(where);
    return '#';
  }
  if (Array.isArray(where)) {
    let out = '[';
    for (let i = 0; i < where.length; i++) out += (i ? ',' : '') + shapeKey(where[i], values);
    return out + ']';
  }
  if (where && typeof where === 'object' && Object.getPrototypeOf(where) === Object.prototype) {
    let out = '{';
    for (const k in where) out += (out.length > 1 ? ',' : '') + JSON.stringify(k) + ':' + shapeKey((where as Record<string, unknown>)[k], values);
    return out + '}';
  }
  return JSON.stringify(where) ?? 'undefined';
}

/** The where-object with its numbers declared as parameters, in shapeKey's order, starting at `first`. */
export function numbersAsParams(where: unknown, first = 0): unknown {
  let next = first;
  const walk = (w: unknown): unknown => {
    if (typeof w === 'number') return param(next++);
    if (Array.isArray(w)) return w.map(walk);
    if (w && typeof w === 'object' && Object.getPrototypeOf(w) === Object.prototype) {
      return Object.fromEntries(Object.entries(w).map(([k, v]) => [k, walk(v)]));
    }
    return w;
  };
  return walk(where);
}
