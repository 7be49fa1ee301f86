import fc from 'fast-check';

/**
 * Property-based walks over any list that speaks the three formats of CONTRACT 9 (GET /posts,
 * GET /trash, GET /admin/users, and their GraphQL fields). A list plugs in as a WalkTarget; the
 * properties insert and remove rows at random between requests and check every answer.
 *
 * Reuse for another list, e.g. GET /admin/users (20 a page, id ascending):
 *
 *   const target: WalkTarget = {
 *     perPage: 20,
 *     fetch: (req) => restFetch('/admin/users', req, adminToken),   // see test/pagination.test.ts
 *     reset: async (n) => { ...soft-delete every other user, then insert n users... },
 *     currentIds: async () => (await sql(app, 'select id from users where deleted_at is null order by id')).map((r) => r.id),
 *     insert: async () => ...insert one user, return its id...,
 *     remove: async (id) => { await sql(app, 'update users set deleted_at = now() where id = ?', [id]); },
 *   };
 *   it('page and simple', () => checkOffsetFormats(target, { maxRows: 70 }));
 *   it('cursor', () => checkCursorFormat(target, { maxRows: 70 }));
 *
 * The properties compare every answer with currentIds(), so it must return exactly what the list
 * shows (the admin's own row included), in the page/simple order; `reset` only sizes the list.
 */
export type SliceRequest =
  | { kind: 'page' | 'simple'; page: number }
  | { kind: 'cursor'; cursor: string | null; direction: 'asc' | 'desc' };

/** The REST query string of a slice request (`paginate`, `page` or `cursor` + `direction`). */
export function sliceQuery(req: SliceRequest): string {
  const q = new URLSearchParams({ paginate: req.kind });
  if (req.kind === 'cursor') {
    q.set('direction', req.direction);
    if (req.cursor) q.set('cursor', req.cursor);
  } else q.set('page', String(req.page));
  return q.toString();
}

/** The GraphQL selection of each format's page type, ids only on the records. */
export const SLICE_FIELDS = {
  page: 'data { id } total perPage currentPage lastPage from to nextPage',
  simple: 'data { id } hasMore',
  cursor: 'data { id } nextCursor prevCursor hasNextPage hasPrevPage perPage path',
} as const;

/** One answer, whatever the surface (REST body or GraphQL field), with ids on the records. */
export interface Slice {
  data: { id: number }[];
  total?: number;
  perPage?: number;
  currentPage?: number;
  lastPage?: number;
  from?: number | null;
  to?: number | null;
  nextPage?: number | null;
  hasMore?: boolean;
  nextCursor?: string | null;
  prevCursor?: string | null;
  hasNextPage?: boolean;
  hasPrevPage?: boolean;
  path?: string;
}

export interface WalkTarget {
  perPage: number;
  /** One request; must throw unless the answer is a success. */
  fetch(req: SliceRequest): Promise<Slice>;
  /** Starts a fresh list of about `count` rows (rows of earlier runs out of sight where possible). */
  reset(count: number): Promise<void>;
  /** The ids in the list right now, in its page/simple order. */
  currentIds(): Promise<number[]>;
  /** Adds one row to the list (it gets a new, larger id). */
  insert(): Promise<number>;
  /** Takes one row out of the list. */
  remove(id: number): Promise<void>;
}

type Mutation = { op: 'insert' } | { op: 'remove'; pick: number };
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.constant<Mutation>({ op: 'insert' }),
  fc.nat(1000).map<Mutation>((pick) => ({ op: 'remove', pick })),
);
/** What happens between two requests: up to 3 inserts or removals. */
const mutations = fc.array(mutation, { maxLength: 3 });

/** Applies mutations; returns the ids removed. */
async function apply(target: WalkTarget, ms: Mutation[]): Promise<number[]> {
  const removed: number[] = [];
  for (const m of ms) {
    if (m.op === 'insert') await target.insert();
    else {
      const ids = await target.currentIds();
      if (ids.length) {
        const id = ids[m.pick % ids.length];
        await target.remove(id);
        removed.push(id);
      }
    }
  }
  return removed;
}

export interface WalkOptions {
  /** Largest list built for a run (choose about 4 pages' worth). */
  maxRows: number;
  numRuns?: number;
}

function expectEqual(actual: unknown, expected: unknown, what: string) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

/** page and simple: every answer's numbers and records match the list as it is at that moment. */
export async function checkOffsetFormats(target: WalkTarget, opts: WalkOptions): Promise<void> {
  const { perPage } = target;
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: opts.maxRows }),
      fc.array(fc.record({ kind: fc.constantFrom<'page' | 'simple'>('page', 'simple'), page: fc.integer({ min: 1, max: Math.ceil(opts.maxRows / perPage) + 2 }), between: mutations }), { minLength: 1, maxLength: 6 }),
      async (rows, steps) => {
        await target.reset(rows);
        for (const s of steps) {
          await apply(target, s.between);
          const ids = await target.currentIds();
          const res = await target.fetch({ kind: s.kind, page: s.page });
          const offset = (s.page - 1) * perPage;
          const expected = ids.slice(offset, offset + perPage);
          expectEqual(res.data.map((r) => r.id), expected, `${s.kind} page ${s.page} records`);
          if (s.kind === 'simple') {
            expectEqual({ hasMore: res.hasMore }, { hasMore: ids.length > offset + perPage }, 'simple hasMore');
            continue;
          }
          const lastPage = Math.max(1, Math.ceil(ids.length / perPage));
          expectEqual(
            { total: res.total, perPage: res.perPage, currentPage: res.currentPage, lastPage: res.lastPage, from: res.from, to: res.to, nextPage: res.nextPage },
            {
              total: ids.length,
              perPage,
              currentPage: s.page,
              lastPage,
              from: expected.length ? offset + 1 : null,
              to: expected.length ? offset + expected.length : null,
              nextPage: s.page < lastPage ? s.page + 1 : null,
            },
            `page ${s.page} numbers`,
          );
        }
      },
    ),
    { numRuns: opts.numRuns ?? 20 },
  );
}

const MAX_SLICES = 200;

/**
 * cursor: walk forward to the end with nextCursor, then back to the start with prevCursor,
 * mutating between requests. In each walk no row is repeated, the order holds, and every row
 * present for the whole walk is seen.
 */
export async function checkCursorFormat(target: WalkTarget, opts: WalkOptions): Promise<void> {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: opts.maxRows }),
      fc.constantFrom<'asc' | 'desc'>('asc', 'desc'),
      fc.infiniteStream(mutations),
      async (rows, direction, between) => {
        await target.reset(rows);
        const before = (a: number, b: number) => (direction === 'asc' ? a < b : a > b);
        const inOrder = (ids: number[]) => ids.every((id, i) => i === 0 || before(ids[i - 1], id));
        const steps = between[Symbol.iterator]();

        // Forward.
        const startIds = await target.currentIds();
        const removedForward = new Set<number>();
        const forward: Slice[] = [];
        let cursor: string | null = null;
        for (;;) {
          const res = await target.fetch({ kind: 'cursor', cursor, direction });
          checkSliceFlags(res, target.perPage);
          forward.push(res);
          if (forward.length > MAX_SLICES) throw new Error('forward walk did not end');
          if (forward.length === 1 && res.prevCursor !== null) throw new Error('first slice has a prevCursor');
          if (!res.nextCursor) break;
          (await apply(target, steps.next().value)).forEach((id) => removedForward.add(id));
          cursor = res.nextCursor;
        }
        const seen = forward.flatMap((s) => s.data.map((r) => r.id));
        if (!inOrder(seen)) throw new Error(`forward walk out of order or repeated: ${seen}`);
        const missing = startIds.filter((id) => !removedForward.has(id) && !seen.includes(id));
        if (missing.length) throw new Error(`forward walk skipped ${missing}`);

        // Backward, from the last slice.
        const last = forward[forward.length - 1];
        const lastIds = last.data.map((r) => r.id);
        const presentAtTurn = new Set(await target.currentIds());
        const removedBackward = new Set<number>();
        const backward: Slice[] = [last];
        let prev = last.prevCursor ?? null;
        while (prev) {
          (await apply(target, steps.next().value)).forEach((id) => removedBackward.add(id));
          const res = await target.fetch({ kind: 'cursor', cursor: prev, direction });
          checkSliceFlags(res, target.perPage);
          backward.push(res);
          if (backward.length > MAX_SLICES) throw new Error('backward walk did not end');
          prev = res.prevCursor ?? null;
        }
        const back = backward.reverse().flatMap((s) => s.data.map((r) => r.id));
        if (!inOrder(back)) throw new Error(`backward walk out of order or repeated: ${back}`);
        // Rows present at the turn and for the whole way back, up to the end of the last slice.
        const bound = lastIds.length ? lastIds[lastIds.length - 1] : null;
        const expectedBack = [...presentAtTurn].filter((id) => !removedBackward.has(id) && (bound === null || id === bound || before(id, bound)));
        const skipped = expectedBack.filter((id) => !back.includes(id));
        if (skipped.length) throw new Error(`backward walk skipped ${skipped}`);
      },
    ),
    { numRuns: opts.numRuns ?? 20 },
  );
}

function checkSliceFlags(res: Slice, perPage: number) {
  if (res.data.length > perPage) throw new Error(`slice longer than ${perPage}`);
  if (res.perPage !== perPage) throw new Error(`perPage ${res.perPage}`);
  if (res.hasNextPage !== (res.nextCursor !== null)) throw new Error('hasNextPage disagrees with nextCursor');
  if (res.hasPrevPage !== (res.prevCursor !== null)) throw new Error('hasPrevPage disagrees with prevCursor');
}
