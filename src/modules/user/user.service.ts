import { requireRole, type RequestContext } from '../../core/context';
import { AppError } from '../../core/errors';
import { clearLoaders } from '../../core/loaders';
import { changeUnderRowLock } from '../../core/row-lock';
import { paginate, type ListRequest, type ListResult } from '../../core/pagination';
import { parseId } from '../../core/validation';
import { User } from './user.entity';
import { userViewSource, type UserJson } from './user.queries';
import type { UserView } from './user.types';

const ADMIN_USERS_PER_PAGE = 20;
const USER_NOT_FOUND = 'User not found';

/**
 * User administration: admins list, soft-delete and restore accounts. The role
 * is checked before anything is looked up, so non-admins learn nothing about which ids exist.
 */
export class UserService {
  /** For surfaces that parse list arguments before calling `list`: 403 must come before 422. */
  async assertAdmin(ctx: RequestContext): Promise<void> {
    await requireRole(ctx, 'admin');
  }

  /** Users as views (GraphQL), or as their REST answers' JSON text (`json`). */
  async list(ctx: RequestContext, request: ListRequest, path?: string): Promise<ListResult<UserView>>;
  async list(ctx: RequestContext, request: ListRequest, path: string, shape: 'json'): Promise<ListResult<UserJson>>;
  async list(ctx: RequestContext, request: ListRequest, path = '', shape: 'view' | 'json' = 'view'): Promise<ListResult<UserView | UserJson>> {
    await requireRole(ctx, 'admin');
    const source = shape === 'json' ? userViewSource(ctx, 'json') : userViewSource(ctx);
    return paginate<UserView | UserJson>(source, {}, request, { perPage: ADMIN_USERS_PER_PAGE, orderBy: [{ id: 'asc' }], path });
  }

  /** Under the row's lock, so of concurrent deletes one answers 200 and the others 404. */
  async softDelete(ctx: RequestContext, rawId: unknown): Promise<string> {
    await requireRole(ctx, 'admin');
    const id = parseId(rawId, USER_NOT_FOUND);
    await changeUnderRowLock(ctx.em, User, { id }, {}, (user) => {
      if (!user) throw AppError.notFound(USER_NOT_FOUND);
      // The row stays (its email stays taken); the softDelete filter hides it and its tokens stop working.
      user.deletedAt = new Date();
    });
    // Authors embedded earlier in the same GraphQL document must read as null from now on.
    clearLoaders(ctx);
    return 'User deleted';
  }

  /** Restoring an active user returns them unchanged. */
  async restore(ctx: RequestContext, rawId: unknown): Promise<User> {
    await requireRole(ctx, 'admin');
    const id = parseId(rawId, USER_NOT_FOUND);
    let changed = false;
    const user = await changeUnderRowLock(ctx.em, User, { id }, { softDelete: false }, (user) => {
      if (!user) throw AppError.notFound(USER_NOT_FOUND);
      if (user.deletedAt) {
        user.deletedAt = null;
        changed = true;
      }
      return user;
    });
    if (changed) clearLoaders(ctx);
    return user;
  }
}
