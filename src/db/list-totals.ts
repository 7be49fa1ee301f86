import type { EntityManager, EventSubscriber, FlushEventArgs } from '@mikro-orm/postgresql';
import { runStatement } from './statements';

/**
 * The version of what public pages show, as a scalar subquery: the sum of `page_versions.v`,
 * which grows by one with every transaction that changes posts, comments or users (their rows, or
 * a TRUNCATE of them), and is visible exactly when that change is (migrations PageVersions,
 * TruncateMovesPageVersions).
 */
export const PAGE_VERSION_SQL = '(select sum("v")::text from "page_versions")';

const VERSION = { sql: `select ${PAGE_VERSION_SQL} as "v"`, params: [] };

/** The current version (a decimal string; '0' before any change): what core/http.ts Revalidation compares. */
export async function dataVersion(em: EntityManager): Promise<string> {
  const [row] = await runStatement<{ v: string | null }>(em, VERSION);
  return row?.v ?? '0';
}

/**
 * The `total` of the page format, counted once per version of the data instead of on every page.
 *
 * Counting every row of a list is most of what PostgreSQL does for its first page: the count of
 * 19,000 live posts is 1.1 ms of the first page's 1.5 ms of backend CPU on the bench's database,
 * and it grows with the table. Yet the count is the same for every client until a transaction
 * changes the rows, and the database numbers those changes (PAGE_VERSION_SQL).
 *
 * So a page statement also selects that version, in the same statement, hence the same snapshot:
 * - read counting (`read(true)`), a page leaves its total here under the version it read;
 * - read without counting (`read(false)`), a page takes the total remembered for its list if the
 *   version it read is the one that total was counted at: no change committed in between, so the
 *   total is the count this page's own snapshot would give. Otherwise it is read again, counting.
 *   So after a change the next page of each list costs one statement more; the pages after skip
 *   the count.
 * - The key is the count's own statement key (its shape, its values, the filters' parameters), so
 *   a list another request sees differently (another filter value) never shares a total.
 * - Per ORM (per database) and per process; another instance counts once for itself.
 * - A flush of this ORM that writes one of those tables forgets every total at once
 *   (ListTotalsFlushes), so the next page counts straight away instead of first finding the
 *   version moved; a change made elsewhere (another instance, plain SQL) is found by the version.
 * - Not used inside a transaction: its snapshot may hold its own uncommitted changes, which a
 *   rollback takes back, under the version every other reader sees.
 * - Not used when the read may go to a replica: a standby makes concurrent commits visible in
 *   the order of the WAL, the primary in its own, so one sum could name two different sets of rows.
 */
interface Counted {
  version: string;
  total: number;
}

const MAX_LISTS = 1000;
const byOrm = new WeakMap<object, Map<string, Counted>>();

function totalsOf(em: EntityManager): Map<string, Counted> {
  const owner = em.getMetadata();
  let totals = byOrm.get(owner);
  if (!totals) byOrm.set(owner, (totals = new Map()));
  return totals;
}

/** The rows a page statement returns: each carries the version it was read at, and, counting, the total. */
interface VersionedRow {
  /** Null only if page_versions had no row (then nothing is remembered); absent on a statement that did not read it. */
  version?: string | null;
  total?: string | number;
}

/**
 * A page of list `key` with its total (null for no rows: a page past the end has none to carry it,
 * and the caller counts). `read(count)` runs the page statement, with the count when `count`.
 * `stale`: the read may go to a replica (then it always counts).
 */
export async function pageWithTotal<R extends VersionedRow>(
  em: EntityManager,
  key: string,
  stale: boolean,
  read: (count: boolean) => Promise<R[]>,
): Promise<{ rows: R[]; total: number | null }> {
  // In a transaction a page may count its own uncommitted rows under the version everyone else
  // reads: it neither takes a remembered total nor leaves one.
  const totals = (stale && em.config.get('replicas')?.length) || em.isInTransaction() ? undefined : totalsOf(em);
  const known = totals?.get(key);
  if (known) {
    const rows = await read(false);
    if (!rows.length) return { rows, total: null };
    if (rows[0].version === known.version) return { rows, total: known.total };
  }
  const rows = await read(true);
  if (!rows.length) return { rows, total: null };
  const total = Number(rows[0].total);
  const version = rows[0].version;
  if (totals && version != null) {
    totals.delete(key);
    if (totals.size >= MAX_LISTS) totals.delete(totals.keys().next().value!);
    totals.set(key, { version, total });
  }
  return { rows, total };
}

/** The tables whose changes move the version (migration PageVersions' triggers). */
const VERSIONED_TABLES = new Set(['posts', 'comments', 'users']);

/**
 * Forgets this ORM's totals after a flush that wrote posts, comments or users (MikroORM's
 * `subscribers` option, mikro-orm.config.ts). Only a shortcut: before the commit, a page may
 * still count the old rows and remember them under the old version, which the next page then
 * finds moved.
 */
export class ListTotalsFlushes implements EventSubscriber {
  afterFlush({ em, uow }: FlushEventArgs): void {
    if (uow.getChangeSets().some((cs) => VERSIONED_TABLES.has(cs.meta.tableName))) byOrm.delete(em.getMetadata());
  }
}
