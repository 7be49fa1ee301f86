import { Arg, Ctx, FieldResolver, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { RequestContext } from '../../core/context';
import { buildListRequest, type ListResult } from '../../core/pagination';
import { CursorPageOf, DirectionEnum, MessageType, PageOf, SimplePageOf } from '../../graphql/pagination.types';
import type { Services } from '../services';
import { UserType } from './user.graphql';
import { presentUser, type UserView } from './user.types';
import { userViewSource } from './user.repository';
import { ETAG, IF_MATCH, userEtag } from '../../graphql/etags';
import { precondition } from '../../core/etag';

const UserPage = PageOf(UserType, 'UserPage');
const UserSimplePage = SimplePageOf(UserType, 'UserSimplePage');
const UserCursorPage = CursorPageOf(UserType, 'UserCursorPage');

@Resolver(() => UserType)
export class UserResolver {
  constructor(private readonly services: Services) {}

  private async list(ctx: RequestContext, kind: 'page' | 'simple' | 'cursor', args: { page?: number | null; cursor?: string | null; direction?: DirectionEnum | null }): Promise<ListResult<UserView>> {
    await this.services.users.assertAdmin(ctx);
    // path as on the other lists' GraphQL fields (`path` is the request path)
    return this.services.users.list(ctx, buildListRequest(kind, args), '/graphql', userViewSource);
  }

  @Query(() => UserPage, { description: 'Users by id ascending, 20 a page (admin).' })
  adminUsers(@Ctx() ctx: RequestContext, @Arg('page', () => Int, { nullable: true }) page?: number) {
    return this.list(ctx, 'page', { page });
  }

  @Query(() => UserSimplePage, { description: 'Users by id ascending, without a total (admin).' })
  adminUsersSimple(@Ctx() ctx: RequestContext, @Arg('page', () => Int, { nullable: true }) page?: number) {
    return this.list(ctx, 'simple', { page });
  }

  @Query(() => UserCursorPage, { description: 'Users by id, keyset slices (admin).' })
  adminUsersCursor(
    @Ctx() ctx: RequestContext,
    @Arg('cursor', () => String, { nullable: true }) cursor?: string,
    @Arg('direction', () => DirectionEnum, { nullable: true }) direction?: DirectionEnum,
  ) {
    return this.list(ctx, 'cursor', { cursor, direction });
  }

  @Mutation(() => MessageType, { description: 'Soft-deletes a user (admin).' })
  async deleteUser(
    @Ctx() ctx: RequestContext,
    @Arg('id', () => Int) id: number,
    @Arg('ifMatch', () => String, { nullable: true, description: IF_MATCH }) ifMatch?: string,
  ): Promise<MessageType> {
    return { message: await this.services.users.softDelete(ctx, id, precondition(this.services.deps.config.requireIfMatch, ifMatch)) };
  }

  @Mutation(() => UserType, { description: 'Restores a soft-deleted user (admin).' })
  async restoreUser(@Ctx() ctx: RequestContext, @Arg('id', () => Int) id: number): Promise<UserView> {
    return this.services.users.restore(ctx, id, (_tx, user) => presentUser(user));
  }

  @FieldResolver(() => String, { description: ETAG })
  etag(@Root() user: UserView, @Ctx() ctx: RequestContext): Promise<string> {
    return userEtag(ctx, user.id);
  }
}
