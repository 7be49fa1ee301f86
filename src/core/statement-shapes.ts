import type { ReadContext } from './context';
import { nativeSql, preparedName, runPrepared, type CompiledStatement } from '../db/prepared';

export type { CompiledStatement };

type Slot = { value: number } | { constant: unknown };

/**
 * Stand-ins for a shape's numbers while it is built. Positive (knex refuses a negative limit);
 * no constant of a shape is a number (every number comes through `n`), so a binding equal to
 * one is that stand-in.
 */
const STAND_IN_BASE = 1_999_999_000;
const standIn = (i: number) => STAND_IN_BASE + i;
const MAX_SHAPES = 500;

/**
 * Hot reads built by the ORM once per shape, then replayed with each request's values.
 *
 * Compiling a QueryBuilder (metadata, filters, knex) was about a quarter of the service's CPU on
 * GET /posts, yet a statement's SQL depends only on its shape: which conditions, which order,
 * which filters. So the first request of a shape builds it with stand-ins for its numbers; the
 * stand-ins' positions among the compiled bindings say where each later request's numbers go.
 * Every number of a shape must come through `n` (ids, limits, offsets); anything else in the
 * statement (filter conditions, `true`, `null`) is part of the shape, and the key names the
 * filters. So a filter whose condition takes a value per request (tenant) must never be part of
 * a shape: its value would be replayed for everyone. Tenant posts build their query per request
 * (tenant-post.service.ts).
 */
export class StatementShapes {
  private readonly shapes = new Map<string, { sql: string; native: string; name: string; slots: Slot[] }>();

  /**
   * Rows of the statement of shape `key` for `values`. `build(n)` builds it with the ORM (on the
   * request's fork, `ctx.em`), taking the i-th number as `n(i)`; it runs once per key (and every
   * time past MAX_SHAPES keys). The statement itself runs through `ctx.reader()`, so a request
   * that only reads shapes never forks, as a named prepared statement (db/prepared.ts).
   * `stale`: the request may read slightly stale data (RequestContext.readFrom), so a read
   * replica may answer (db/replicas.ts).
   */
  async rows<R>(ctx: ReadContext, key: string, values: readonly number[], build: (n: (i: number) => number) => Promise<CompiledStatement>, stale = false): Promise<R[]> {
    let shape = this.shapes.get(key);
    if (!shape) {
      const { sql, bindings } = await build(standIn);
      const slots = bindings.map((b): Slot => {
        const i = typeof b === 'number' ? b - STAND_IN_BASE : -1;
        return i >= 0 && i < values.length ? { value: i } : { constant: b };
      });
      // PostgreSQL's own placeholders ($1, ...), once per shape rather than per request.
      shape = { sql, slots, name: preparedName(sql), native: nativeSql(ctx.reader().getConnection('write'), sql, bindings) };
      if (this.shapes.size < MAX_SHAPES) this.shapes.set(key, shape);
    }
    const bindings = shape.slots.map((s) => ('value' in s ? values[s.value] : s.constant));
    return runPrepared<R>(ctx.reader(), { sql: shape.sql, bindings }, { name: shape.name, native: shape.native, stale });
  }
}

/**
 * The shape of a where-object as a key: its numbers moved into `values` (in the order numbersOut
 * moves them) and written `#`, everything else as JSON. One pass and one string, because every
 * read of a hot list or detail computes it (numbersOut plus JSON.stringify was a few µs of
 * GET /posts/:id's ~110).
 */
export function shapeKey(where: unknown, values: number[]): string {
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
