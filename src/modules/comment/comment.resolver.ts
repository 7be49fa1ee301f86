import { Arg, Ctx, FieldResolver, Int, Mutation, Resolver, Root, Subscription } from 'type-graphql';
import type { RequestContext } from '../../core/context';
import { AppError } from '../../core/errors';
import { liveHub, topics } from '../../graphql/live';
import { findPostView } from '../post/post.loaders';
import { POST_NOT_FOUND } from '../post/post.service';
import { Comment } from './comment.entity';
import type { Services } from '../services';
import { IDEMPOTENCY_KEY_ARG } from '../idempotency/idempotency.types';
import { AuthorType } from '../user/user.graphql';
import type { AuthorView } from '../user/user.types';
import { authorLoader, knownAuthor } from '../post/post.loaders';
import { CommentType } from './comment.graphql';
import { presentComment, type CommentView } from './comment.types';
import { MessageType } from '../../graphql/pagination.types';
import { commentEtag, ETAG, IF_MATCH } from '../../graphql/etags';
import { precondition } from '../../core/etag';
import type { DirectResolvers } from '../../graphql/direct-resolvers';

const COMMENT_NOT_FOUND = 'Comment not found';

@Resolver(() => CommentType)
export class CommentResolver {
  constructor(private readonly services: Services) {}

  @Mutation(() => CommentType)
  async addComment(
    @Ctx() ctx: RequestContext,
    @Arg('postId', () => Int) postId: number,
    @Arg('body', () => String) body: string,
    @Arg('idempotencyKey', () => String, { nullable: true, description: IDEMPOTENCY_KEY_ARG }) idempotencyKey?: string | null,
  ): Promise<CommentView> {
    const { comments, idempotency } = this.services;
    const request = await idempotency.prepare(ctx, { key: idempotencyKey, field: 'idempotencyKey', method: 'GRAPHQL', path: 'addComment', body: { postId, body } });
    const out = await idempotency.run(ctx, request, async (c) => {
      const comment = await comments.add(c, postId, { body }, (_em, created) => presentComment(created));
      return { status: 200, body: null, resourceId: comment.id, value: comment };
    });
    if (!out.replayed) return out.value;
    // The comment first created, read now (it may since have gone with its post).
    const comment = await ctx.em.findOne(Comment, { id: out.resourceId });
    if (!comment) throw AppError.notFound(COMMENT_NOT_FOUND);
    return presentComment(comment);
  }

  @Mutation(() => CommentType, { description: "A new body, by the comment's author or a moderator." })
  async updateComment(
    @Ctx() ctx: RequestContext,
    @Arg('id', () => Int) id: number,
    @Arg('body', () => String) body: string,
    @Arg('ifMatch', () => String, { nullable: true, description: IF_MATCH }) ifMatch?: string,
  ): Promise<CommentView> {
    return this.services.comments.update(ctx, id, { body }, precondition(this.services.deps.config.requireIfMatch, ifMatch), (_tx, comment) => presentComment(comment));
  }

  @Mutation(() => MessageType, { description: "Deletes the comment for good: by its author, the post's author or a moderator." })
  deleteComment(
    @Ctx() ctx: RequestContext,
    @Arg('id', () => Int) id: number,
    @Arg('ifMatch', () => String, { nullable: true, description: IF_MATCH }) ifMatch?: string,
  ): Promise<MessageType> {
    return this.services.comments.remove(ctx, id, precondition(this.services.deps.config.requireIfMatch, ifMatch));
  }

  @Subscription(() => CommentType, {
    description: 'A comment was added to the post; completes when the post is trashed or deleted. NOT_FOUND for a missing or trashed post.',
    subscribe: ({ args, context }) => {
      const postId = args.postId as number;
      return liveHub(context).subscribe(
        {
          topic: topics.commentAdded(postId),
          field: 'commentAdded',
          tenantId: null,
          load: (ctx, e) => (e.type === 'commentAdded' ? findCommentView(ctx, e.postId, e.commentId) : Promise.resolve(null)),
        },
        async () => {
          if (!(await findPostView(context, postId))) throw AppError.notFound(POST_NOT_FOUND);
        },
      );
    },
  })
  commentAdded(@Arg('postId', () => Int) _postId: number, @Root() comment: CommentView): CommentView {
    return comment;
  }

  @FieldResolver(() => String, { description: ETAG })
  etag(@Root() comment: CommentView, @Ctx() ctx: RequestContext): Promise<string> {
    return commentEtag(ctx, comment.id);
  }

  // Runs as commentEmbeds.user (below): this declares the field.
  @FieldResolver(() => AuthorType, { nullable: true, description: 'null when the author is soft-deleted' })
  user(@Root() comment: CommentView, @Ctx() ctx: RequestContext): AuthorView | null | Promise<AuthorView | null> {
    return commentEmbeds.user(comment, {}, ctx);
  }
}

/** A comment's author as graphql-js calls it, without type-graphql's wrapper (as post.resolver.ts postEmbeds). */
export const commentEmbeds = {
  user(comment: CommentView, _args: object, ctx: RequestContext): AuthorView | null | Promise<AuthorView | null> {
    const known = knownAuthor(comment);
    return known !== undefined ? known : authorLoader(ctx).load(comment.userId);
  },
} satisfies DirectResolvers<CommentView>;

/**
 * The comment an event names, its author primed; null once the comment itself is gone. Not
 * "only while its post is visible": the comment was committed while its post was live (adding
 * one requires that), and a trash committed after it may land before this read, yet the comment
 * is delivered before the subscription completes.
 */
async function findCommentView(ctx: RequestContext, postId: number, commentId: number): Promise<CommentView | null> {
  const comment = await ctx.em.findOne(Comment, { id: commentId, post: postId });
  if (!comment) return null;
  const view = presentComment(comment);
  await authorLoader(ctx).load(view.userId);
  return view;
}
