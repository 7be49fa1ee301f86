import type { FilterQuery } from '@mikro-orm/postgresql';
import { requireActor, type RequestContext } from '../../core/context';
import { AppError, isUniqueViolation } from '../../core/errors';
import { paginate, type ListRequest, type ListResult } from '../../core/pagination';
import { parseAll, parseId, parseInput } from '../../core/validation';
import { User } from '../user/user.entity';
import { Post } from './post.entity';
import { createPostInput, postFiltersInput } from './post.inputs';
import { postViewSource } from './post.queries';
import { nextFreeSlug, slugify } from './post.slug';
import type { PostView } from './post.types';

export const POSTS_PER_PAGE = 10;
export const POST_NOT_FOUND = 'Post not found';
const SLUG_ATTEMPTS = 50;

/**
 * The blog's rules (SPEC 4.2, CONTRACT 5 and 8). Ids and bodies arrive raw and are checked here
 * in the contract's order: 401 (authentication) → 404 (existence) → 403 (ownership) → 422 (input).
 */
export class PostService {
  /** `request` parses the paging arguments, so its problems and the filters' are reported together. */
  async list(ctx: RequestContext, filters: unknown, request: () => ListRequest, path: string): Promise<ListResult<PostView>> {
    const [f, req] = parseAll(() => parseInput(postFiltersInput, filters ?? {}), request);
    const where: FilterQuery<Post> = {};
    if (f.published) Object.assign(where, { published: true, publishedAt: { $ne: null } });
    if (f.author !== null) Object.assign(where, { user: f.author });
    return paginate(postViewSource(ctx), where, req, {
      perPage: POSTS_PER_PAGE,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      path,
    });
  }

  /** Read like a list item (one statement with the author), since a detail is only ever shown. */
  async get(ctx: RequestContext, rawId: unknown): Promise<PostView> {
    const id = parseId(rawId, POST_NOT_FOUND);
    const [post] = (await postViewSource(ctx).slice({ id }, { orderBy: { id: 'asc' }, limit: 1 })).rows;
    if (!post) throw AppError.notFound(POST_NOT_FOUND);
    return post;
  }

  /**
   * Slugs are unique across active and trashed posts. Concurrent creates with one title race
   * for the same next slug: the loser gets `posts_slug_unique` and tries again with a fresh look.
   */
  async create(ctx: RequestContext, rawInput: unknown): Promise<Post> {
    const actor = await requireActor(ctx);
    const input = parseInput(createPostInput, rawInput);
    const base = slugify(input.title);
    for (let attempt = 1; ; attempt++) {
      const slug = await this.freeSlug(ctx, base);
      // A fork per attempt: a failed flush leaves nothing behind in the request's unit of work.
      const em = ctx.em.fork();
      const post = em.create(Post, { user: em.getReference(User, actor.id), title: input.title, slug, body: input.body } as Post);
      try {
        await em.flush();
        return post;
      } catch (err) {
        if (!isUniqueViolation(err, 'posts_slug_unique') || attempt >= SLUG_ATTEMPTS) throw err;
      }
    }
  }

  /**
   * Raw SQL, so trashed posts count too. The common case (a new title) is one unique-index probe;
   * only a taken slug pays for the pattern scan over its suffixed siblings.
   */
  private async freeSlug(ctx: RequestContext, base: string): Promise<string> {
    const conn = ctx.em.getConnection();
    const exact = await conn.execute<{ slug: string }[]>('select slug from posts where slug = ?', [base]);
    if (!exact.length) return base;
    const taken = await conn.execute<{ slug: string }[]>('select slug from posts where slug ~ ?', [`^${base}-[0-9]+$`]);
    return nextFreeSlug(base, [base, ...taken.map((r) => r.slug)]);
  }

  /** Publishing a published post returns it unchanged (CONTRACT 8). */
  async publish(ctx: RequestContext, rawId: unknown): Promise<Post> {
    const post = await this.ownedPost(ctx, rawId, false);
    if (!post.published || !post.publishedAt) {
      post.published = true;
      post.publishedAt = new Date();
      await ctx.em.flush();
    }
    return post;
  }

  /** Soft delete; a trashed post is not found. */
  async remove(ctx: RequestContext, rawId: unknown): Promise<{ message: string }> {
    const post = await this.ownedPost(ctx, rawId, false);
    post.deletedAt = new Date();
    await ctx.em.flush();
    return { message: 'Post deleted' };
  }

  /** Looked up including trashed; restoring an active post returns it unchanged. */
  async restore(ctx: RequestContext, rawId: unknown): Promise<Post> {
    const post = await this.ownedPost(ctx, rawId, true);
    if (post.deletedAt) {
      post.deletedAt = null;
      await ctx.em.flush();
    }
    return post;
  }

  /** 401, then 404, then 403 unless the caller wrote the post or moderates. */
  private async ownedPost(ctx: RequestContext, rawId: unknown, withTrashed: boolean): Promise<Post> {
    const actor = await requireActor(ctx);
    const id = parseId(rawId, POST_NOT_FOUND);
    const post = await ctx.em.findOne(Post, { id }, withTrashed ? { filters: { softDelete: false } } : {});
    if (!post) throw AppError.notFound(POST_NOT_FOUND);
    if (post.user.id !== actor.id && !actor.isModerator) throw AppError.forbidden();
    return post;
  }
}
