import type { MikroORM } from '@mikro-orm/postgresql';
import { requireRole, type RequestContext } from '../../core/context';
import { AppError } from '../../core/errors';
import { intervalJob, type BackgroundJob, type SharedPeriod } from '../../core/jobs';
import { clearLoaders } from '../../core/loaders';
import type { Logger } from '../../core/logger';
import { paginate, type ListRequest, type ListResult } from '../../core/pagination';
import { changeUnderRowLock, type ReadBack } from '../../core/row-lock';
import { transactionWithRetry } from '../../core/transaction';
import { parseId } from '../../core/validation';
import { emit } from '../../db/events';
import { sharedPeriod } from '../../db/jobs';
import { Post } from '../post/post.entity';
import type { PostListReader } from '../post/post.repository';
import { deleteTrashedBefore, tryRetentionLock } from './trash.repository';

const TRASH_PER_PAGE = 20;
const NOT_IN_TRASH = 'Not in trash';
const TRASHED = { deletedAt: { $ne: null } } as const;
/** Lifts the softDelete filter by name: the trash reads exactly the rows it hides elsewhere. */
const WITH_TRASHED = { softDelete: false } as const;

/** Role moderator or admin for everything here, checked before any lookup (403 before 404). */
export class TrashService {
  /**
   * `request` is parsed after the role check, so a caller without the role never learns about bad
   * input. `read` says what each post is read as (post.repository.ts).
   */
  async list<T extends { id: number }>(ctx: RequestContext, request: () => ListRequest, path: string, read: PostListReader<T>): Promise<ListResult<T>> {
    await this.guard(ctx);
    return paginate(read(ctx, WITH_TRASHED), TRASHED, request(), {
      perPage: TRASH_PER_PAGE,
      orderBy: [{ deletedAt: 'desc' }, { id: 'desc' }],
      path,
    });
  }

  /** Under the row's lock: of a restore and a permanent delete racing, one wins and the other is 404. */
  async restore<T>(ctx: RequestContext, rawId: unknown, readBack: ReadBack<Post, T>): Promise<T> {
    const id = await this.trashedId(ctx, rawId);
    const answer = await changeUnderRowLock(ctx.em, Post, { id, ...TRASHED }, WITH_TRASHED, async (post, tx) => {
      if (!post) throw AppError.notFound(NOT_IN_TRASH);
      post.deletedAt = null;
      await tx.flush();
      return readBack(tx, post);
    });
    clearLoaders(ctx);
    return answer;
  }

  /**
   * Permanent deletion; the foreign key removes the post's comments. One conditional statement
   * decides: only a row still trashed is deleted, so a post restored meanwhile (or deleted by a
   * concurrent call) deletes nothing and answers 404.
   */
  async destroy(ctx: RequestContext, rawId: unknown): Promise<{ message: string }> {
    const id = await this.trashedId(ctx, rawId);
    // The delete and its live event commit together: no row deleted, no event (and a 404).
    await ctx.em.transactional(async (tx) => {
      const deleted = await tx.nativeDelete(Post, { id, ...TRASHED }, { filters: WITH_TRASHED });
      if (!deleted) throw AppError.notFound(NOT_IN_TRASH);
      await emit(tx, [{ type: 'postsGone', postIds: [id] }]);
    });
    // The row is gone: an entity of it this request loaded earlier must not answer a later lookup.
    ctx.em.clear();
    clearLoaders(ctx);
    return { message: 'Permanently deleted' };
  }

  /**
   * Every trashed post, deleted one by one; counts only the rows this call removed.
   * Each delete re-checks that its row is still trashed, so a post restored after the list was
   * read stays, uncounted, and its restore's 200 holds.
   */
  async purge(ctx: RequestContext): Promise<{ message: string; count: number }> {
    await this.guard(ctx);
    const rows = await ctx.em.find(Post, TRASHED, { filters: WITH_TRASHED, fields: ['id'], orderBy: { id: 'asc' } });
    let count = 0;
    const gone: number[] = [];
    for (const row of rows) {
      const n = await ctx.em.nativeDelete(Post, { id: row.id, ...TRASHED }, { filters: WITH_TRASHED });
      if (n) gone.push(row.id);
      count += n;
    }
    // Each delete committed on its own; their subscribers hear of them once, after the last.
    await emit(ctx.em, [{ type: 'postsGone', postIds: gone }]);
    ctx.em.clear();
    clearLoaders(ctx);
    return { message: `Permanently deleted ${count} ${count === 1 ? 'post' : 'posts'}`, count };
  }

  private guard(ctx: RequestContext) {
    return requireRole(ctx, 'moderator', 'admin');
  }

  private async trashedId(ctx: RequestContext, rawId: unknown): Promise<number> {
    await this.guard(ctx);
    return parseId(rawId, NOT_IN_TRASH);
  }
}

/** Arbitrary but fixed: every instance must take the same advisory lock key. */
export const RETENTION_LOCK_KEY = 4711_0002;
const RETENTION_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Purges posts trashed more than `days` ago (0 = off). Several instances may run it: each run
 * takes a transaction-scoped advisory lock without waiting, and an instance that does not get
 * it skips the run, so one instance at a time does the work. The scheduled runs are also
 * shared per period (db/jobs.ts sharedPeriod): one run per hour between all instances.
 */
export async function purgeExpiredTrash(orm: MikroORM, days: number): Promise<number | null> {
  if (days <= 0) return 0;
  return transactionWithRetry(orm.em, async (em) => {
    if (!(await tryRetentionLock(em, RETENTION_LOCK_KEY))) return null;
    const ids = await deleteTrashedBefore(em, days);
    await emit(em, [{ type: 'postsGone', postIds: ids }]);
    return ids.length;
  });
}

/** `firstRunMs`: how soon after start the first run comes (then hourly). */
export function trashRetentionJob(orm: MikroORM, days: number, log: Logger, firstRunMs: number): BackgroundJob & { runNow(): Promise<void> } {
  const claim = sharedPeriod(orm);
  // A scheduled run that finds the period taken by another instance says so: one line per
  // instance and period, the sign that this instance's run came and did nothing.
  const shared: SharedPeriod = async (name, periodMs) => {
    const mine = await claim(name, periodMs);
    if (!mine && days > 0) log.info('trash retention skipped: another instance ran it this period');
    return mine;
  };
  return intervalJob(
    'trash-retention',
    RETENTION_INTERVAL_MS,
    async () => {
      const purged = await purgeExpiredTrash(orm, days);
      // Every run that did the work says so (0 included): one line per period across instances.
      if (purged !== null && days > 0) log.info({ purged, days }, 'trash retention purged posts');
    },
    (err) => log.error({ err }, 'trash retention failed'),
    { firstRunMs, shared },
  );
}
