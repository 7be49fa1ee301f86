import type { Actor, UserView } from '../../core/actor';
import { shapeOf, type ViewOf } from '../../core/shape';
import { UserSchema } from './user.entity';

export type { Actor, UserView } from '../../core/actor';

/** Moderators and admins may act on others' posts. */
export const canModerate = (actor: Pick<Actor, 'role'>) => actor.role === 'admin' || actor.role === 'moderator';

const USER_FIELDS = ['id', 'name', 'email', 'role', 'emailVerifiedAt', 'createdAt', 'updatedAt'] as const;

/**
 * A user as it leaves the service (the password is hidden: no shape can carry it): the reads'
 * select list, row and view and the REST JSON's keys (user.repository.ts) follow from this list
 * and the entity (core/shape.ts). Its GraphQL type is user.graphql.ts's.
 */
export const userShape = shapeOf(UserSchema, USER_FIELDS);

/** The bearer token's user: userShape and the token version (user.repository.ts actorById). */
export const actorShape = shapeOf(UserSchema, [...USER_FIELDS, 'tokenVersion']);

/**
 * A user's view from the entity, an actor or a view (what GraphQL answers). Its types tie UserView
 * (core/actor.ts) to userShape both ways: a view must be a source of the shape, and its result a view.
 */
export const presentUser = (u: UserView): UserView => userShape.present(u);

/** The `user` embedded in posts and comments: public, so id and name only (never the email). */
export const authorShape = shapeOf(UserSchema, ['id', 'name']);

export type AuthorView = ViewOf<typeof authorShape>;
