import { Arg, Ctx, FieldResolver, Int, Mutation, Resolver, Root } from 'type-graphql';
import type { RequestContext } from '../../core/context';
import type { Services } from '../services';
import { AuthorType, type AuthorView } from '../post/author.types';
import { authorLoader, knownAuthor } from '../post/post.loaders';
import { CommentType, presentComment, type CommentView } from './comment.types';

@Resolver(() => CommentType)
export class CommentResolver {
  constructor(private readonly services: Services) {}

  @Mutation(() => CommentType)
  async addComment(
    @Ctx() ctx: RequestContext,
    @Arg('postId', () => Int) postId: number,
    @Arg('body', () => String) body: string,
  ): Promise<CommentView> {
    return presentComment(await this.services.comments.add(ctx, postId, { body }));
  }

  @FieldResolver(() => AuthorType, { nullable: true, description: 'null when the author is soft-deleted' })
  user(@Root() comment: CommentView, @Ctx() ctx: RequestContext): AuthorView | null | Promise<AuthorView | null> {
    const known = knownAuthor(comment);
    return known !== undefined ? known : authorLoader(ctx).load(comment.userId);
  }
}
