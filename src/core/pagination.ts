import type { FilterQuery, QueryOrderMap } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { AppError } from './errors';
import { parseInput, positiveIntString, MAX_INT32 } from './validation';

/**
 * The three list formats (page, simple, cursor), used by every list in the service.
 *  - page:   count(*) + limit/offset; supports jumping to a page; not stable under inserts.
 *  - simple: limit+1/offset, no count; `hasMore` comes from the extra row.
 *  - cursor: keyset on id (`id < last` / `id > first`), one extra row for "more this way" and
 *            one indexed EXISTS for "anything the other way"; stable under inserts and deletes.
 */
export type Direction = 'asc' | 'desc';

export type ListRequest =
  | { kind: 'page'; page: number }
  | { kind: 'simple'; page: number }
  | { kind: 'cursor'; cursor: Cursor | null; direction: Direction };

interface Cursor {
  id: number;
  /** `next` continues past `id` in the list's direction; `prev` walks back before it. */
  towards: 'next' | 'prev';
}

interface PageResult<T> {
  data: T[];
  total: number;
  perPage: number;
  currentPage: number;
  lastPage: number;
  from: number | null;
  to: number | null;
  nextPage: number | null;
}

interface SimpleResult<T> {
  data: T[];
  hasMore: boolean;
}

interface CursorResult<T> {
  data: T[];
  nextCursor: string | null;
  prevCursor: string | null;
  hasNextPage: boolean;
  hasPrevPage: boolean;
  perPage: number;
  path: string;
}

export type ListResult<T> = PageResult<T> | SimpleResult<T> | CursorResult<T>;

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify({ id: cursor.id, to: cursor.towards })).toString('base64url');
}

// Boundaries may sit one step outside the id range (0 or MAX+1) after rows were deleted.
const cursorPayload = z.object({ id: z.number().int().min(0).max(MAX_INT32 + 1), to: z.enum(['next', 'prev']) }).strict();

function decodeCursor(raw: string): Cursor {
  try {
    if (!/^[A-Za-z0-9_-]{1,200}$/.test(raw)) throw new Error('shape');
    const parsed = cursorPayload.parse(JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')));
    return { id: parsed.id, towards: parsed.to };
  } catch {
    throw AppError.validation([{ field: 'cursor', message: 'cursor is not a cursor this list returned' }]);
  }
}

const pageNumber = z
  .string({ error: 'page must be a positive integer' })
  .regex(positiveIntString, 'page must be a positive integer')
  .transform(Number)
  .refine((n) => n <= MAX_INT32, 'page must be a positive integer');

/** The REST query of every list: `paginate`, `page`, `cursor`, `direction` (strings, once each). */
const listQuerySchema = z.object({
  paginate: z.enum(['page', 'simple', 'cursor'], { error: 'paginate must be one of page, simple, cursor' }).optional(),
  page: pageNumber.optional(),
  cursor: z.string({ error: 'cursor must be a string' }).optional(),
  direction: z.enum(['asc', 'desc'], { error: 'direction must be asc or desc' }).optional(),
});

export function listRequestFromQuery(query: unknown): ListRequest {
  const q = parseInput(listQuerySchema, query);
  // A bad cursor is 422 in every format, as a bad `direction` is, not only where it is used.
  if (q.cursor) decodeCursor(q.cursor);
  return buildListRequest(q.paginate ?? 'page', q);
}

/** Shared by REST (from the query) and GraphQL (each format is its own field). */
export function buildListRequest(
  kind: 'page' | 'simple' | 'cursor',
  args: { page?: number | null; cursor?: string | null; direction?: Direction | null },
): ListRequest {
  if (kind === 'cursor') {
    return { kind, cursor: args.cursor ? decodeCursor(args.cursor) : null, direction: args.direction ?? 'desc' };
  }
  const page = args.page ?? 1;
  if (!Number.isInteger(page) || page < 1 || page > MAX_INT32) {
    throw AppError.validation([{ field: 'page', message: 'page must be a positive integer' }]);
  }
  return { kind, page };
}

/** One read of a list: `limit` rows of `where` in `orderBy`, skipping `offset`. */
export interface SliceOptions {
  orderBy: QueryOrderMap<object>[] | QueryOrderMap<object>;
  limit: number;
  offset?: number;
  /** Also count every row of `where` (the page format's `total`). */
  withTotal?: boolean;
}

/**
 * Where a list reads its rows: plain views (e.g. posts with their authors and the total in one
 * statement) or their REST answers, under the ORM's filters, which decide what is visible.
 */
export interface ListSource<T> {
  /** `total` is null when the source did not count (not asked, or it counts alongside rows and there were none). */
  slice(where: FilterQuery<object>, opts: SliceOptions): Promise<{ rows: T[]; total: number | null }>;
  count(where: FilterQuery<object>): Promise<number>;
}

export interface PaginateOptions {
  perPage: number;
  /** Order for page and simple formats; should end with `id` (ties break by id). */
  orderBy: QueryOrderMap<object>[];
  /** The request path, echoed in the cursor format's `path`. */
  path?: string;
}

/** Runs one list request over `source` filtered by `where`; embeds are the caller's to load. */
export async function paginate<T extends { id: number }>(
  source: ListSource<T>,
  where: FilterQuery<object>,
  req: ListRequest,
  opts: PaginateOptions,
): Promise<ListResult<T>> {
  const { perPage } = opts;

  if (req.kind === 'page') {
    const offset = (req.page - 1) * perPage;
    const slice = offset >= MAX_INT32
      ? { rows: [] as T[], total: null }
      : await source.slice(where, { orderBy: opts.orderBy, limit: perPage, offset, withTotal: true });
    const data = slice.rows;
    // A page past the end has no row to carry the total: count on its own (rare).
    const total = slice.total ?? (await source.count(where));
    const lastPage = Math.max(1, Math.ceil(total / perPage));
    const from = data.length ? offset + 1 : null;
    return {
      data,
      total,
      perPage,
      currentPage: req.page,
      lastPage,
      from,
      to: from === null ? null : offset + data.length,
      nextPage: req.page < lastPage ? req.page + 1 : null,
    };
  }

  if (req.kind === 'simple') {
    const offset = (req.page - 1) * perPage;
    const rows = offset >= MAX_INT32 ? [] : (await source.slice(where, { orderBy: opts.orderBy, limit: perPage + 1, offset })).rows;
    return { data: rows.slice(0, perPage), hasMore: rows.length > perPage };
  }

  // Cursor. A cursor is an exclusive boundary: `next` = rows after `id` in the list's order,
  // `prev` = rows before it. Walking back reads the other way and flips the slice.
  const { cursor, direction } = req;
  const reverse = (d: Direction): Direction => (d === 'asc' ? 'desc' : 'asc');
  const beyond = (d: Direction, id: number) => ({ id: d === 'asc' ? { $gt: id } : { $lt: id } });
  const and = (extra: object): FilterQuery<object> => ({ $and: [where, extra] });
  const backwards = cursor?.towards === 'prev';
  const readDir = backwards ? reverse(direction) : direction;
  // One step past `id` in direction d, so that "beyond" includes `id` itself.
  const step = (d: Direction, id: number) => (d === 'asc' ? id - 1 : id + 1);

  const { rows } = await source.slice(cursor ? and(beyond(readDir, cursor.id)) : where, { orderBy: { id: readDir }, limit: perPage + 1 });
  const moreThisWay = rows.length > perPage;
  const page = rows.slice(0, perPage);
  if (backwards) page.reverse();
  const first = page[0];
  const last = page[page.length - 1];

  // Anything on the other side? One row read in id order (PostgreSQL walks the primary key) instead of a count.
  let moreOtherWay = false;
  let otherAnchor = 0;
  if (cursor) {
    const otherDir = reverse(readDir);
    const edge = page.length ? (backwards ? last.id : first.id) : cursor.id;
    otherAnchor = page.length ? edge : step(otherDir, edge);
    moreOtherWay = (await source.slice(and(beyond(otherDir, otherAnchor)), { orderBy: { id: otherDir }, limit: 1 })).rows.length > 0;
  }

  const hasNextPage = backwards ? moreOtherWay : moreThisWay;
  const hasPrevPage = backwards ? moreThisWay : moreOtherWay;
  const nextId = last ? last.id : otherAnchor;
  const prevId = first ? first.id : otherAnchor;
  return {
    data: page,
    nextCursor: hasNextPage ? encodeCursor({ id: nextId, towards: 'next' }) : null,
    prevCursor: hasPrevPage ? encodeCursor({ id: prevId, towards: 'prev' }) : null,
    hasNextPage,
    hasPrevPage,
    perPage,
    path: opts.path ?? '',
  };
}
