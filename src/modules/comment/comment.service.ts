import { requireActor, type RequestContext } from '../../core/context';
import { AppError } from '../../core/errors';
import { flushAndEmit } from '../../core/events';
import { clearLoaders } from '../../core/loaders';
import type { ReadBack } from '../../core/row-lock';
import { parseId, parseInput } from '../../core/validation';
import { Post } from '../post/post.entity';
import { POST_NOT_FOUND } from '../post/post.service';
import { User } from '../user/user.entity';
import { Comment } from './comment.entity';
import { createCommentInput } from './comment.inputs';

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
}
