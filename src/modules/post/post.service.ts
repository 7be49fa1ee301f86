import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import { requireActor, type RequestContext } from '../../core/context';
import { AppError, isUniqueViolation } from '../../core/errors';
import { emit, type LiveEvent } from '../../db/events';
import { clearLoaders } from '../../core/loaders';
import { changeUnderRowLock, type ReadBack } from '../../core/row-lock';
import { checkPrecondition, type Precondition } from '../../core/etag';
import { RetryTransaction } from '../../core/transaction';
import { paginate, type ListRequest, type ListResult } from '../../core/pagination';
import { parseAll, parseId, parseInput } from '../../core/validation';
import { User } from '../user/user.entity';
import { canModerate } from '../user/user.types';
import { Post } from './post.entity';
import { createPostInput, postFiltersInput, updatePostInput } from './post.inputs';
import { currentPostTag, lockSlug, POST_LIST_ORDER, POSTS_PER_PAGE, takenSlugs, type PostListReader } from './post.repository';
import { nextFreeSlug, slugify } from './post.slug';

export const POST_NOT_FOUND = 'Post not found';

/**
 * The blog's rules (who may do what, slugs, trash). Ids and bodies arrive raw and are checked here
 * in one order: 401 (authentication) → 404 (existence) → 403 (ownership) → 422 (input).
 */
export class PostService {
  /**
   * `request` parses the paging arguments, so its problems and the filters' are reported together.
   * `read` says what each post is read as (post.repository.ts): the rules and filters are the same.
   */
  async list<T extends { id: number }>(ctx: RequestContext, filters: unknown, request: () => ListRequest, path: string, read: PostListReader<T>): Promise<ListResult<T>> {
    const [f, req] = parseAll(() => parseInput(postFiltersInput, filters ?? {}), request);
    const where: FilterQuery<Post> = {};
    if (f.published) Object.assign(where, { published: true, publishedAt: { $ne: null } });
    if (f.author !== null) Object.assign(where, { user: f.author });
    return paginate(read(ctx), where, req, {
      perPage: POSTS_PER_PAGE,
      orderBy: POST_LIST_ORDER,
      path,
    });
  }

  /** Read like a list item (one statement with the author), since a detail is only ever shown. */
  async get<T>(ctx: RequestContext, rawId: unknown, read: (ctx: RequestContext, id: number) => Promise<T | null>): Promise<T> {
    const id = parseId(rawId, POST_NOT_FOUND);
    const post = await read(ctx, id);
    if (post === null) throw AppError.notFound(POST_NOT_FOUND);
    return post;
  }

  /**
   * Slugs are unique across active and trashed posts. Creates of one base slug take
   * a transaction-scoped advisory lock on it, so they queue instead of racing for the same next
   * slug: any number of concurrent creates with one title succeed, one after the other.
   * A different title can still produce our candidate (`a-2` is both "A" taken twice and "A 2"),
   * and its creates hold another lock: the unique index catches that, and we look again.
   */
  async create<T>(ctx: RequestContext, rawInput: unknown, readBack: ReadBack<Post, T>): Promise<T> {
    const actor = await requireActor(ctx);
    const input = parseInput(createPostInput, rawInput);
    const base = slugify(input.title);
    let slug = '';
    const attempt = async (em: EntityManager): Promise<T> => {
      await lockSlug(em, base);
      // Trashed posts' slugs count too: nextFreeSlug keeps the true siblings (a long base is cut
      // shorter as its suffix grows, so no pattern on the full base fits).
      slug = nextFreeSlug(base, await takenSlugs(em, base));
      const created = em.create(Post, { user: em.getReference(User, actor.id), title: input.title, slug, body: input.body } as Post);
      await em.flush();
      return readBack(em, created);
    };
    if (ctx.em.isInTransaction()) {
      // Inside a caller's transaction (an Idempotency-Key's): no savepoint of its own, which would
      // cost two round trips on every create. A slug taken meanwhile aborts the caller's
      // transaction; it runs again (core/transaction.ts) and the next look sees that slug.
      try {
        const post = await attempt(ctx.em.fork({ keepTransactionContext: true }));
        clearLoaders(ctx);
        return post;
      } catch (err) {
        throw isUniqueViolation(err, 'posts_slug_unique') ? new RetryTransaction(err) : err;
      }
    }
    const failed = new Set<string>();
    for (;;) {
      try {
        // A fork per attempt: a failed flush leaves nothing behind in the request's unit of work.
        const post = await ctx.em.fork().transactional(attempt);
        clearLoaders(ctx);
        return post;
      } catch (err) {
        // The conflicting row was committed before PostgreSQL reported it, so the next look sees
        // it and picks another slug; proposing a slug that already failed means that look is broken.
        if (!isUniqueViolation(err, 'posts_slug_unique') || failed.has(slug)) throw err;
        failed.add(slug);
      }
    }
  }

  /** A title and/or body edit of an active post; the slug stays what it was, so links keep working. */
  async update<T>(ctx: RequestContext, rawId: unknown, rawInput: unknown, pre: Precondition, readBack: ReadBack<Post, T>): Promise<T> {
    const { answer } = await this.transition(ctx, rawId, false, pre, readBack, (post) => {
      const input = parseInput(updatePostInput, rawInput);
      if (input.title !== undefined) post.title = input.title;
      if (input.body !== undefined) post.body = input.body;
      return true;
    });
    return answer;
  }

  /** Publishing a published post returns it unchanged; a trashed post is not found. */
  async publish<T>(ctx: RequestContext, rawId: unknown, pre: Precondition, readBack: ReadBack<Post, T>): Promise<T> {
    const { answer } = await this.transition(ctx, rawId, false, pre, readBack, (post) => {
      if (post.published && post.publishedAt) return false;
      post.published = true;
      post.publishedAt = new Date();
      return true;
    }, (post) => [{ type: 'postPublished', postId: post.id }]);
    return answer;
  }

  /** Soft delete; a trashed post is not found. */
  async remove(ctx: RequestContext, rawId: unknown, pre: Precondition): Promise<{ message: string }> {
    await this.transition(ctx, rawId, false, pre, () => undefined, (post) => {
      post.deletedAt = new Date();
      return true;
    }, (post) => [{ type: 'postsGone', postIds: [post.id] }]);
    return { message: 'Post deleted' };
  }

  /** Looked up including trashed; restoring an active post returns it unchanged. */
  async restore<T>(ctx: RequestContext, rawId: unknown, pre: Precondition, readBack: ReadBack<Post, T>): Promise<T> {
    const { answer } = await this.transition(ctx, rawId, true, pre, readBack, (post) => {
      if (!post.deletedAt) return false;
      post.deletedAt = null;
      return true;
    });
    return answer;
  }

  /**
   * 401, then 404, then 403 unless the caller wrote the post or moderates, then the precondition
   * (412/428: If-Match against the post's current tag); then `change` parses its input (422) and
   * edits the post and says whether it did. Lookup, checks and change happen under the row's lock, so
   * concurrent deletes, restores and publishes of one post take turns, each seeing what the one
   * before left (a publish after a delete finds no post). It resolves once committed, with
   * `changed`: the loaders are cleared only after a write (a repeat that changes nothing leaves
   * what the request read valid). A change's live `events` are NOTIFY'd in its transaction, so
   * they go out with its commit and only then; a repeat that changes nothing emits none. The
   * caller's `readBack` runs last in the transaction, on the row as the change left it.
   */
  private async transition<T>(
    ctx: RequestContext,
    rawId: unknown,
    withTrashed: boolean,
    pre: Precondition,
    readBack: ReadBack<Post, T>,
    change: (post: Post) => boolean,
    events?: (post: Post) => LiveEvent[],
  ): Promise<{ answer: T; changed: boolean }> {
    const actor = await requireActor(ctx);
    const id = parseId(rawId, POST_NOT_FOUND);
    let changed = false;
    const answer = await changeUnderRowLock(ctx.em, Post, { id }, withTrashed ? { softDelete: false } : {}, async (post, tx) => {
      if (!post) throw AppError.notFound(POST_NOT_FOUND);
      if (post.user.id !== actor.id && !canModerate(actor)) throw AppError.forbidden();
      await checkPrecondition(pre, () => currentPostTag(tx, post.id));
      changed = change(post);
      if (changed) await tx.flush();
      if (changed && events) await emit(tx, events(post));
      return readBack(tx, post);
    });
    if (changed) clearLoaders(ctx);
    return { answer, changed };
  }
}
