import { requireActor, type RequestContext } from '../../core/context';
import { AppError } from '../../core/errors';
import { flushAndEmit } from '../../core/events';
import { clearLoaders } from '../../core/loaders';
import { parseId, parseInput } from '../../core/validation';
import { Post } from '../post/post.entity';
import { POST_NOT_FOUND } from '../post/post.service';
import { User } from '../user/user.entity';
import { Comment } from './comment.entity';
import { createCommentInput } from './comment.inputs';

export class CommentService {
  /** 401 → 404 (missing or trashed post) → 422. */
  async add(ctx: RequestContext, rawPostId: unknown, rawInput: unknown): Promise<Comment> {
    const actor = await requireActor(ctx);
    const postId = parseId(rawPostId, POST_NOT_FOUND);
    const post = await ctx.em.findOne(Post, { id: postId });
    if (!post) throw AppError.notFound(POST_NOT_FOUND);
    const input = parseInput(createCommentInput, rawInput);
    const comment = ctx.em.create(Comment, { post, user: ctx.em.getReference(User, actor.id), body: input.body } as Comment);
    await flushAndEmit(ctx.em, () => [{ type: 'commentAdded', postId, commentId: comment.id }]);
    clearLoaders(ctx);
    return comment;
  }
}
