import { requireActor, type RequestContext } from '../../core/context';
import { AppError } from '../../core/errors';
import { checkPrecondition, type Precondition } from '../../core/etag';
import { flushAndEmit } from '../../db/events';
import { clearLoaders } from '../../core/loaders';
import { changeUnderRowLock, type ReadBack } from '../../core/row-lock';
import { parseId, parseInput } from '../../core/validation';
import { Post } from '../post/post.entity';
import { POST_NOT_FOUND } from '../post/post.service';
import { User } from '../user/user.entity';
import { canModerate, type Actor } from '../user/user.types';
import { Comment } from './comment.entity';
import { currentCommentTag } from './comment.repository';
import { createCommentInput } from './comment.inputs';

const COMMENT_NOT_FOUND = 'Comment not found';

export class CommentService {
  /** 401 → 404 (missing or trashed post) → 422. Answers what `readBack` reads of the new comment, once committed. */
  async add<T>(ctx: RequestContext, rawPostId: unknown, rawInput: unknown, readBack: ReadBack<Comment, T>): Promise<T> {
    const actor = await requireActor(ctx);
    const postId = parseId(rawPostId, POST_NOT_FOUND);
    const post = await ctx.em.findOne(Post, { id: postId });
    if (!post) throw AppError.notFound(POST_NOT_FOUND);
    const input = parseInput(createCommentInput, rawInput);
    const comment = ctx.em.create(Comment, { post, user: ctx.em.getReference(User, actor.id), body: input.body } as Comment);
    await flushAndEmit(ctx.em, () => [{ type: 'commentAdded', postId, commentId: comment.id }]);
    clearLoaders(ctx);
    return readBack(ctx.em, comment);
  }

  /** A new body, by the comment's author or a moderator. */
  async update<T>(ctx: RequestContext, rawId: unknown, rawInput: unknown, pre: Precondition, readBack: ReadBack<Comment, T>): Promise<T> {
    return this.underLock(ctx, rawId, pre, (actor, comment) => comment.user.id === actor.id || canModerate(actor), async (comment, tx) => {
      comment.body = parseInput(createCommentInput, rawInput).body;
      await tx.flush();
      return readBack(tx, comment);
    });
  }

  /** Gone for good, by the comment's author, the post's author or a moderator. */
  async remove(ctx: RequestContext, rawId: unknown, pre: Precondition): Promise<{ message: string }> {
    return this.underLock(ctx, rawId, pre, (actor, comment, post) => comment.user.id === actor.id || post.user.id === actor.id || canModerate(actor), async (comment, tx) => {
      tx.remove(comment);
      await tx.flush();
      return { message: 'Comment deleted' };
    });
  }

  /**
   * 401 → 404 (no such comment, or its post is trashed: the comment is not visible) → 403 unless
   * `may` → the precondition (412/428) → `change`, all under the comment's row lock, so an edit
   * or delete and the tag it was checked against are one serial step.
   */
  private async underLock<R>(
    ctx: RequestContext,
    rawId: unknown,
    pre: Precondition,
    may: (actor: Actor, comment: Comment, post: Post) => boolean,
    change: (comment: Comment, tx: RequestContext['em']) => Promise<R>,
  ): Promise<R> {
    const actor = await requireActor(ctx);
    const id = parseId(rawId, COMMENT_NOT_FOUND);
    const answer = await changeUnderRowLock(ctx.em, Comment, { id }, {}, async (comment, tx) => {
      // The post under the posts' filters: a trashed post hides its comments.
      const post = comment && (await tx.findOne(Post, { id: comment.post.id }, { refresh: true }));
      if (!comment || !post) throw AppError.notFound(COMMENT_NOT_FOUND);
      if (!may(actor, comment, post)) throw AppError.forbidden();
      await checkPrecondition(pre, () => currentCommentTag(tx, comment.id));
      return change(comment, tx);
    });
    clearLoaders(ctx);
    return answer;
  }
}
