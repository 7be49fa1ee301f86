import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Hot reads built by the ORM once per shape, then replayed with each request's values.
 *
 * Compiling a QueryBuilder (metadata, filters, knex) was about a quarter of the service's CPU on
 * GET /posts, yet a statement's SQL depends only on its shape: which conditions, which order,
 * which filters. So the first request of a shape builds it with stand-ins for its numbers; the
 * stand-ins' positions among the compiled bindings say where each later request's numbers go.
 * Every number of a shape must come through `n` (ids, limits, offsets); anything else in the
 * statement (filter conditions, `true`, `null`) is part of the shape. Only for statements whose
 * filters take no parameters (softDelete, not tenant), which is why the key names the filters.
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

export class StatementShapes {
  private readonly shapes = new Map<string, { sql: string; slots: Slot[] }>();

  /**
   * Rows of the statement of shape `key` for `values`. `build(n)` builds it with the ORM, taking
   * the i-th number as `n(i)`; it runs once per key (and every time past MAX_SHAPES keys).
   */
  async rows<R>(em: EntityManager, key: string, values: readonly number[], build: (n: (i: number) => number) => Promise<CompiledStatement>): Promise<R[]> {
    let shape = this.shapes.get(key);
    if (!shape) {
      const { sql, bindings } = await build(standIn);
      const slots = bindings.map((b): Slot => {
        const i = typeof b === 'number' ? b - STAND_IN_BASE : -1;
        return i >= 0 && i < values.length ? { value: i } : { constant: b };
      });
      shape = { sql, slots };
      if (this.shapes.size < MAX_SHAPES) this.shapes.set(key, shape);
    }
    const params = shape.slots.map((s) => ('value' in s ? values[s.value] : s.constant));
    return em.getConnection('read').execute(shape.sql, params as unknown[], 'all', em.getTransactionContext(), { id: em.id } as never) as Promise<R[]>;
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
