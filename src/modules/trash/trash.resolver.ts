import { Arg, Ctx, Int, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../core/context';
import { buildListRequest } from '../../core/pagination';
import { DirectionEnum, MessageType } from '../../graphql/pagination.types';
import type { Services } from '../services';
import { PostCursorPage, PostPage, PostSimplePage, PostType, presentPost, PurgeResultType, type PostView } from '../post/post.types';

@Resolver()
export class TrashResolver {
  constructor(private readonly services: Services) {}

  private async list(ctx: RequestContext, kind: 'page' | 'simple' | 'cursor', args: object) {
    return this.services.trash.list(ctx, () => buildListRequest(kind, args), '/graphql');
  }

  @Query(() => PostPage)
  trash(@Ctx() ctx: RequestContext, @Arg('page', () => Int, { nullable: true }) page?: number) {
    return this.list(ctx, 'page', { page });
  }

  @Query(() => PostSimplePage)
  trashSimple(@Ctx() ctx: RequestContext, @Arg('page', () => Int, { nullable: true }) page?: number) {
    return this.list(ctx, 'simple', { page });
  }

  @Query(() => PostCursorPage)
  trashCursor(
    @Ctx() ctx: RequestContext,
    @Arg('cursor', () => String, { nullable: true }) cursor?: string,
    @Arg('direction', () => DirectionEnum, { nullable: true }) direction?: DirectionEnum,
  ) {
    return this.list(ctx, 'cursor', { cursor, direction });
  }

  @Mutation(() => PostType)
  async restoreFromTrash(@Ctx() ctx: RequestContext, @Arg('id', () => Int) id: number): Promise<PostView> {
    return presentPost(await this.services.trash.restore(ctx, id));
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
