import { performance } from 'node:perf_hooks';
import { CompiledQuery } from 'kysely';
import { raw, type AbstractSqlConnection, type EntityManager, type QueryBuilder, type RawQueryFragment } from '@mikro-orm/postgresql';
import { namesStatements, runPooled, statementName } from './named-statements';
import { readStale } from './replicas';
import { logStatement, PRIMARY, type ReadTarget } from './statement-log';

/**
 * The one way the service runs a statement it writes itself (the repositories' and db/'s; the
 * ORM's unit of work, find and count stay the ORM's), and the one cache of compiled statements.
 *
 * Run: `runStatement` sends a QueryBuilder's statement (statementOf) or a hand-written one (`sql`)
 * with PostgreSQL's `$1, $2, ...` and its values apart, bound by the driver: in the
 * EntityManager's transaction through the ORM's Kysely client, else through pg's pool of the
 * connection it reads from (db/named-statements.ts runPooled; a read that may be slightly stale
 * on the one db/replicas.ts picks), named there when cached. Each is handed to the ORM's logger
 * as MikroORM hands its own (db/statement-log.ts), its errors to the driver's `convertException`.
 *
 * Cache: building a QueryBuilder costs more Node CPU than the rest of a small read, yet its text
 * depends only on its shape. So a builder that runs on every request declares each request value
 * as `param(i)` where it goes, and everything else is the shape. The key rule: a cached
 * statement's key is the shape's name PLUS the parameters of every ORM filter of the
 * EntityManager it is built on, so a filter's per-request value (the tenant) yields one entry per
 * value and is never replayed to another request. Any other value must be named by the shape.
 */

/** SQL with `?` placeholders (as the QueryBuilder writes them) and its values, in order. */
export interface Statement {
  sql: string;
  params: readonly unknown[];
  /** `sql` with PostgreSQL's numbered placeholders, once computed (a cached statement carries it). */
  text?: string;
  /** The name it runs under outside a transaction (a cached statement's: db/named-statements.ts). */
  name?: string;
}

/**
 * The place of the request's `index`-th value in a statement being built (cachedStatement): a raw
 * fragment holding a marker, which survives where MikroORM writes a value into the text (a
 * sub-query in a select or a join) as among the values; cachedStatement makes each a placeholder.
 */
export function param(index: number): RawQueryFragment {
  let p = paramFragments[index];
  if (!p) {
    p = paramFragments[index] = raw(`${MARK}${index}${MARK_END}`);
    declared.set(p, index);
  }
  return p;
}

const MARK = '\u0001param:';
const MARK_END = '\u0002';
const paramFragments: RawQueryFragment[] = [];
const declared = new WeakMap<object, number>();
/** A placeholder or a declared parameter's marker, in the order they appear. */
const SLOTS = /\?|\u0001param:(\d+)\u0002/g;

/** A statement written by hand: each `${value}` is a bound parameter (a `?` here), never text. */
export const sql = (strings: TemplateStringsArray, ...params: unknown[]): Statement => ({ sql: strings.join('?'), params });

/**
 * A QueryBuilder's statement: its getQuery() has a `?` for each value, getParams() the values in
 * that order. Every value of a QueryBuilder is a bound parameter, so the text holds no other `?`.
 */
export function statementOf(qb: Pick<QueryBuilder<never>, 'getQuery' | 'getParams'>): Statement {
  return { sql: qb.getQuery(), params: qb.getParams() };
}

/**
 * `sql`'s `?` placeholders as PostgreSQL's `$1, $2, ...`; throws if they do not match `count`
 * values, or if a declared parameter's marker is left (param() outside cachedStatement).
 */
function numbered(sql: string, count: number): string {
  let n = 0;
  const text = sql.replace(SLOTS, (placeholder) => {
    if (placeholder !== '?') throw new Error('a declared parameter (param) in a statement not built by cachedStatement');
    return `$${++n}`;
  });
  if (n !== count) throw new Error(`a statement with ${n} placeholders was given ${count} values`);
  return text;
}

/**
 * The rows of `statement`, in `em`'s transaction if any (then always on the primary). `stale`: a
 * read that may go to a replica; `quiet`: kept out of the statement log (the pool gauge's).
 */
export async function runStatement<R>(em: EntityManager, statement: Statement, options: { stale?: boolean; quiet?: boolean } = {}): Promise<R[]> {
  const text = statement.text ?? numbered(statement.sql, statement.params.length);
  const trx = em.getTransactionContext<CompiledQueryRunner>();
  if (trx) return inTransaction<R>(em, trx, statement, text, options.quiet);
  const run = (connection: AbstractSqlConnection, target: ReadTarget) => {
    const named = statement.name !== undefined && statement.text !== undefined && namesStatements(em);
    return runPooled<R>(em, connection, target, { ...statement, name: named ? statement.name : undefined, text }, options.quiet);
  };
  return options.stale ? readStale(em, run) : run(em.getConnection('write'), PRIMARY);
}

/** What runs a compiled query in a transaction: Kysely's. */
interface CompiledQueryRunner {
  executeQuery<R>(query: CompiledQuery<R>): Promise<{ rows: R[] }>;
}

/** A transaction runs on its own connection, which is the primary's. */
async function inTransaction<R>(em: EntityManager, db: CompiledQueryRunner, statement: Statement, text: string, quiet?: boolean): Promise<R[]> {
  const start = performance.now();
  try {
    const { rows } = await db.executeQuery(CompiledQuery.raw(text, statement.params as unknown[]));
    if (!quiet) logStatement(em, statement, text, PRIMARY, start, rows.length);
    return rows as R[];
  } catch (err) {
    if (!quiet) logStatement(em, statement, text, PRIMARY, start, 0, 'error');
    throw em.getDriver().convertException(err as Error);
  }
}

interface Compiled {
  /** With a `?` for each slot. */
  sql: string;
  /** The same with PostgreSQL's `$1, $2, ...`. */
  text: string;
  name: string;
  /** Each value of the statement: the index of a declared parameter (the request's value goes there) or a value of the shape. */
  slots: readonly (DeclaredSlot | { value: unknown })[];
}

type DeclaredSlot = { index: number };

const compiled = new Map<string, Compiled>();
const MAX_COMPILED = 2000;
const filterNames = new WeakMap<object, string[]>();

/** The names of every filter the ORM knows (the entities' and the configuration's), once per ORM. */
function filtersOf(em: EntityManager): string[] {
  const metadata = em.getMetadata();
  let names = filterNames.get(metadata);
  if (!names) {
    const all = new Set(Object.keys(em.config.get('filters') ?? {}));
    for (const meta of metadata) for (const name of Object.keys(meta.filters ?? {})) all.add(name);
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
    entry = compile(shape, await build(em.global ? em.fork() : em));
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, entry);
  }
  const params = entry.slots.map((slot) => {
    if (!('index' in slot)) return slot.value;
    if (slot.index >= values.length) throw new Error(`statement ${shape}: no value for parameter ${slot.index}`);
    return values[slot.index];
  });
  return { sql: entry.sql, text: entry.text, name: entry.name, params };
}

/** The names of every statement built so far (what a connection may be asked to prepare): pooler tests. */
export const compiledStatementNames = (): string[] => [...new Set([...compiled.values()].map((c) => c.name))];

/**
 * A LIMIT that is part of the shape (a page size) is written into the text. PostgreSQL plans a
 * named statement once for every value (its generic plan) only when that plan is no dearer than
 * planning each run; with the LIMIT unknown it assumes a tenth of the table, so it planned every
 * run of a page again (`pg_prepared_statements.custom_plans`, test/named-statements.test.ts).
 */
function isPageSize(value: unknown, sql: string, at: number): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0 && /\blimit\s+$/i.test(sql.slice(0, at));
}

/** A built statement as slots: each `?` a value of the shape or a declared parameter, each marker a declared parameter. */
function compile(shape: string, built: Statement): Compiled {
  const slots: Compiled['slots'][number][] = [];
  let next = 0;
  const sql = built.sql.replace(SLOTS, (placeholder, index: string | undefined, at: number, whole: string) => {
    if (index !== undefined) slots.push({ index: Number(index) });
    else {
      const value = built.params[next++];
      const i = declared.get(value as object);
      if (i === undefined && isPageSize(value, whole, at)) return String(value);
      slots.push(i === undefined ? { value } : { index: i });
    }
    return '?';
  });
  if (next !== built.params.length) throw new Error(`statement ${shape}: ${next} placeholders for ${built.params.length} values`);
  const text = numbered(sql, slots.length);
  return { sql, text, name: statementName(text), slots };
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
