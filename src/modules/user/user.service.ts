import { requireRole, type RequestContext } from '../../core/context';
import { AppError } from '../../core/errors';
import { paginate, type ListRequest, type ListResult } from '../../core/pagination';
import { parseId } from '../../core/validation';
import { User } from './user.entity';
import { userViewSource } from './user.queries';
import type { UserView } from './user.types';

export const ADMIN_USERS_PER_PAGE = 20;
const USER_NOT_FOUND = 'User not found';

/**
 * User administration (CONTRACT 5): admins list, soft-delete and restore accounts. The role
 * is checked before anything is looked up, so non-admins learn nothing about which ids exist.
 */
export class UserService {
  /** For surfaces that parse list arguments before calling `list`: 403 must come before 422. */
  async assertAdmin(ctx: RequestContext): Promise<void> {
    await requireRole(ctx, 'admin');
  }

  async list(ctx: RequestContext, request: ListRequest, path = ''): Promise<ListResult<UserView>> {
    await requireRole(ctx, 'admin');
    return paginate(userViewSource(ctx), {}, request, { perPage: ADMIN_USERS_PER_PAGE, orderBy: [{ id: 'asc' }], path });
  }

  async softDelete(ctx: RequestContext, rawId: unknown): Promise<string> {
    await requireRole(ctx, 'admin');
    const id = parseId(rawId, USER_NOT_FOUND);
    const user = await ctx.em.findOne(User, { id });
    if (!user) throw AppError.notFound(USER_NOT_FOUND);
    // The row stays (its email stays taken); the softDelete filter hides it and its tokens stop working.
    user.deletedAt = new Date();
    await ctx.em.flush();
    return 'User deleted';
  }

  async restore(ctx: RequestContext, rawId: unknown): Promise<User> {
    await requireRole(ctx, 'admin');
    const id = parseId(rawId, USER_NOT_FOUND);
    const user = await ctx.em.findOne(User, { id }, { filters: { softDelete: false } });
    if (!user) throw AppError.notFound(USER_NOT_FOUND);
    if (user.deletedAt) {
      user.deletedAt = null;
      await ctx.em.flush();
    }
    return user;
  }
}
