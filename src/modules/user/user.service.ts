import { requireRole, type RequestContext } from '../../core/context';
import { AppError } from '../../core/errors';
import { clearLoaders } from '../../core/loaders';
import { changeUnderRowLock, type ReadBack } from '../../core/row-lock';
import { checkPrecondition, type Precondition } from '../../core/etag';
import { paginate, type ListRequest, type ListResult } from '../../core/pagination';
import { parseId } from '../../core/validation';
import { User } from './user.entity';
import { currentUserTag, type UserListReader } from './user.repository';

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

  /** Users as `read` reads them (user.repository.ts): views (GraphQL) or their REST answers. */
  async list<T extends { id: number }>(ctx: RequestContext, request: ListRequest, path: string, read: UserListReader<T>): Promise<ListResult<T>> {
    await requireRole(ctx, 'admin');
    return paginate(read(ctx), {}, request, { perPage: ADMIN_USERS_PER_PAGE, orderBy: [{ id: 'asc' }], path });
  }

  /**
   * Under the row's lock, so of concurrent deletes one answers 200 and the others 404, and the
   * precondition (If-Match against the user's current tag) is checked in the same step.
   */
  async softDelete(ctx: RequestContext, rawId: unknown, pre: Precondition): Promise<string> {
    await requireRole(ctx, 'admin');
    const id = parseId(rawId, USER_NOT_FOUND);
    await changeUnderRowLock(ctx.em, User, { id }, {}, async (user, tx) => {
      if (!user) throw AppError.notFound(USER_NOT_FOUND);
      await checkPrecondition(pre, () => currentUserTag(tx, user.id));
      // The row stays (its email stays taken); the softDelete filter hides it and its tokens stop working.
      user.deletedAt = new Date();
    });
    // Authors embedded earlier in the same GraphQL document must read as null from now on.
    clearLoaders(ctx);
    return 'User deleted';
  }

  /** Restoring an active user returns them unchanged. */
  async restore<T>(ctx: RequestContext, rawId: unknown, readBack: ReadBack<User, T>): Promise<T> {
    await requireRole(ctx, 'admin');
    const id = parseId(rawId, USER_NOT_FOUND);
    let changed = false;
    const answer = await changeUnderRowLock(ctx.em, User, { id }, { softDelete: false }, async (user, tx) => {
      if (!user) throw AppError.notFound(USER_NOT_FOUND);
      if (user.deletedAt) {
        user.deletedAt = null;
        changed = true;
        await tx.flush();
      }
      return readBack(tx, user);
    });
    if (changed) clearLoaders(ctx);
    return answer;
  }
}
