import type { RouteDef } from '../http/routes';
import { AuthResolver } from './auth/auth.resolver';
import { authRoutes } from './auth/auth.routes';
import { CommentResolver } from './comment/comment.resolver';
import { PostResolver, UserPostsResolver } from './post/post.resolver';
import { postRoutes } from './post/post.routes';
import { TrashResolver } from './trash/trash.resolver';
import { trashRoutes } from './trash/trash.routes';
import { UserResolver } from './user/user.resolver';
import { userRoutes } from './user/user.routes';
import type { Services } from './services';

/** Every feature's GraphQL resolvers (classes; constructed with Services by graphql/schema.ts). */
export const resolvers = [AuthResolver, UserResolver, PostResolver, UserPostsResolver, CommentResolver, TrashResolver] as const;

/** Every feature's REST routes. */
export function restRoutes(services: Services): RouteDef[] {
  return [...authRoutes(services), ...userRoutes(services), ...postRoutes(services), ...trashRoutes(services)];
}
