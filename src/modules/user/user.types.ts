import { Field, Int, ObjectType } from 'type-graphql';
import type { Actor, Role, UserView } from '../../core/actor';
import { shapeOf } from '../../core/shape';
import { UserSchema } from './user.entity';

export type { Actor, UserView } from '../../core/actor';

/** Moderators and admins may act on others' posts. */
export const canModerate = (actor: Pick<Actor, 'role'>) => actor.role === 'admin' || actor.role === 'moderator';

const USER_FIELDS = ['id', 'name', 'email', 'role', 'emailVerifiedAt', 'createdAt', 'updatedAt'] as const;

/**
 * A user as it leaves the service (the password is hidden: no shape can carry it): the reads'
 * select list, row and view (user.queries.ts) and the REST JSON's keys (user.rest.ts) follow from
 * this list and the entity (core/shape.ts).
 */
export const userShape = shapeOf(UserSchema, USER_FIELDS);

/** The bearer token's user: userShape and the token version (user.queries.ts actorById). */
export const actorShape = shapeOf(UserSchema, [...USER_FIELDS, 'tokenVersion']);

/**
 * A user's view from the entity, an actor or a view (what GraphQL answers). Its types tie UserView
 * (core/actor.ts) to userShape both ways: a view must be a source of the shape, and its result a view.
 */
export const presentUser = (u: UserView): UserView => userShape.present(u);

/** GraphQL's User: written in type-graphql's idiom; test/shapes.test.ts holds its fields to userShape. */
@ObjectType('User', { simpleResolvers: true })
export class UserType implements UserView {
  @Field(() => Int) id!: number;
  @Field(() => String) name!: string;
  @Field(() => String) email!: string;
  @Field(() => String) role!: Role;
  @Field(() => Date, { nullable: true }) emailVerifiedAt!: Date | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}
