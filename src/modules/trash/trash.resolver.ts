import type { GraphQLResolveInfo } from 'graphql';
import { Arg, Ctx, Info, Int, Mutation, Query, Resolver } from 'type-graphql';
import { asView, withComments } from '../post/post.resolver';
import { postViewSource } from '../post/post.loaders';
import type { RequestContext } from '../../core/context';
import { buildListRequest } from '../../core/pagination';
import { DirectionEnum, MessageType } from '../../graphql/pagination.types';
import type { Services } from '../services';
import { PostCursorPage, PostPage, PostSimplePage, PostType, PurgeResultType } from '../post/post.graphql';
import type { PostView } from '../post/post.types';

@Resolver()
export class TrashResolver {
  constructor(private readonly services: Services) {}

  private async list(ctx: RequestContext, info: GraphQLResolveInfo, kind: 'page' | 'simple' | 'cursor', args: object) {
    const list = await this.services.trash.list(ctx, () => buildListRequest(kind, args), '/graphql', postViewSource);
    await withComments(ctx, info, ['data'], list.data);
    return list;
  }

  @Query(() => PostPage)
  trash(@Ctx() ctx: RequestContext, @Info() info: GraphQLResolveInfo, @Arg('page', () => Int, { nullable: true }) page?: number) {
    return this.list(ctx, info, 'page', { page });
  }

  @Query(() => PostSimplePage)
  trashSimple(@Ctx() ctx: RequestContext, @Info() info: GraphQLResolveInfo, @Arg('page', () => Int, { nullable: true }) page?: number) {
    return this.list(ctx, info, 'simple', { page });
  }

  @Query(() => PostCursorPage)
  trashCursor(
    @Ctx() ctx: RequestContext,
    @Info() info: GraphQLResolveInfo,
    @Arg('cursor', () => String, { nullable: true }) cursor?: string,
    @Arg('direction', () => DirectionEnum, { nullable: true }) direction?: DirectionEnum,
  ) {
    return this.list(ctx, info, 'cursor', { cursor, direction });
  }

  @Mutation(() => PostType)
  async restoreFromTrash(@Ctx() ctx: RequestContext, @Arg('id', () => Int) id: number): Promise<PostView> {
    return this.services.trash.restore(ctx, id, asView);
  }

  @Mutation(() => MessageType)
  deleteFromTrash(@Ctx() ctx: RequestContext, @Arg('id', () => Int) id: number) {
    return this.services.trash.destroy(ctx, id);
  }

  @Mutation(() => PurgeResultType)
  purgeTrash(@Ctx() ctx: RequestContext) {
    return this.services.trash.purge(ctx);
  }
}
