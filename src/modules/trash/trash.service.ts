import type { MikroORM } from '@mikro-orm/postgresql';
import { requireRole, type RequestContext } from '../../core/context';
import { AppError } from '../../core/errors';
import { intervalJob, type BackgroundJob } from '../../core/jobs';
import { clearLoaders } from '../../core/loaders';
import type { Logger } from '../../core/logger';
import { paginate, type ListRequest, type ListResult, type ListSource } from '../../core/pagination';
import { postSource, type PostShape } from '../post/post.queries';
import type { PostAs } from '../post/post.service';
import { parseId } from '../../core/validation';
import { Post } from '../post/post.entity';

export const TRASH_PER_PAGE = 20;
export const NOT_IN_TRASH = 'Not in trash';
const TRASHED = { deletedAt: { $ne: null } } as const;
/** Lifts the softDelete filter by name: the trash reads exactly the rows it hides elsewhere. */
const WITH_TRASHED = { softDelete: false } as const;

/** Role moderator or admin for everything here, checked before any lookup (CONTRACT 5). */
export class TrashService {
  /** `request` is parsed after the role check, so a caller without the role never learns about bad input. */
  async list<S extends PostShape = 'view'>(ctx: RequestContext, request: () => ListRequest, path: string, shape?: S): Promise<ListResult<PostAs<S>>> {
    await this.guard(ctx);
    return paginate(postSource(ctx, shape ?? 'view', WITH_TRASHED) as ListSource<PostAs<S>>, TRASHED, request(), {
      perPage: TRASH_PER_PAGE,
      orderBy: [{ deletedAt: 'desc' }, { id: 'desc' }],
      path,
    });
  }

  async restore(ctx: RequestContext, rawId: unknown): Promise<Post> {
    const post = await this.trashed(ctx, rawId);
    post.deletedAt = null;
    await ctx.em.flush();
    clearLoaders(ctx);
    return post;
  }

  /** Permanent deletion; the foreign key removes the post's comments. */
  async destroy(ctx: RequestContext, rawId: unknown): Promise<{ message: string }> {
    const post = await this.trashed(ctx, rawId);
    await ctx.em.nativeDelete(Post, { id: post.id, ...TRASHED }, { filters: WITH_TRASHED });
    ctx.em.getUnitOfWork().unsetIdentity(post);
    clearLoaders(ctx);
    return { message: 'Permanently deleted' };
  }

  /** Every trashed post, deleted one by one (SPEC 4.3); counts only the rows this call removed. */
  async purge(ctx: RequestContext): Promise<{ message: string; count: number }> {
    await this.guard(ctx);
    const rows = await ctx.em.find(Post, TRASHED, { filters: WITH_TRASHED, fields: ['id'], orderBy: { id: 'asc' } });
    let count = 0;
    for (const row of rows) {
      count += await ctx.em.nativeDelete(Post, { id: row.id, ...TRASHED }, { filters: WITH_TRASHED });
    }
    ctx.em.clear();
    clearLoaders(ctx);
    return { message: `Permanently deleted ${count} ${count === 1 ? 'post' : 'posts'}`, count };
  }

  private guard(ctx: RequestContext) {
    return requireRole(ctx, 'moderator', 'admin');
  }

  private async trashed(ctx: RequestContext, rawId: unknown): Promise<Post> {
    await this.guard(ctx);
    const id = parseId(rawId, NOT_IN_TRASH);
    const post = await ctx.em.findOne(Post, { id, ...TRASHED }, { filters: WITH_TRASHED });
    if (!post) throw AppError.notFound(NOT_IN_TRASH);
    return post;
  }
}

/** Arbitrary but fixed: every instance must take the same advisory lock key. */
export const RETENTION_LOCK_KEY = 4711_0002;
const RETENTION_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Purges posts trashed more than `days` ago (0 = off). Several instances may run it: each run
 * takes a transaction-scoped advisory lock without waiting, and an instance that does not get
 * it skips the run, so one instance at a time does the work.
 */
export async function purgeExpiredTrash(orm: MikroORM, days: number): Promise<number | null> {
  if (days <= 0) return 0;
  const knex = orm.em.getConnection().getKnex();
  return knex.transaction(async (trx) => {
    const { rows } = await trx.raw('select pg_try_advisory_xact_lock(?) as locked', [RETENTION_LOCK_KEY]);
    if (!rows[0].locked) return null;
    const deleted = await trx.raw(`delete from posts where deleted_at is not null and deleted_at < now() - make_interval(days => ?)`, [days]);
    return deleted.rowCount as number;
  });
}

/** `firstRunMs`: how soon after start the first run comes (then hourly). */
export function trashRetentionJob(orm: MikroORM, days: number, log: Logger, firstRunMs: number): BackgroundJob & { runNow(): Promise<void> } {
  return intervalJob(
    'trash-retention',
    RETENTION_INTERVAL_MS,
    async () => {
      const purged = await purgeExpiredTrash(orm, days);
      if (purged) log.info({ purged, days }, 'trash retention purged posts');
    },
    (err) => log.error({ err }, 'trash retention failed'),
    { firstRunMs },
  );
}
