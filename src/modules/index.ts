import type { RouteDef } from '../http/routes';
import { AuthResolver } from './auth/auth.resolver';
import { authRoutes } from './auth/auth.routes';
import { commentEmbeds, CommentResolver } from './comment/comment.resolver';
import { commentRoutes } from './comment/comment.routes';
import { postEmbeds, PostResolver, UserPostsResolver } from './post/post.resolver';
import { postRoutes } from './post/post.routes';
import type { Services } from './services';
import { TenantPostResolver } from './tenant-post/tenant-post.resolver';
import { tenantPostRoutes } from './tenant-post/tenant-post.routes';
import { TrashResolver } from './trash/trash.resolver';
import { trashRoutes } from './trash/trash.routes';
import { UserResolver } from './user/user.resolver';
import { userRoutes } from './user/user.routes';

/** Every feature's GraphQL resolvers (classes; constructed with Services by graphql/schema.ts). */
export const resolvers = [
  AuthResolver,
  UserResolver,
  PostResolver,
  UserPostsResolver,
  CommentResolver,
  TrashResolver,
  TenantPostResolver,
] as const;

/** The embeds a page resolves most, called by graphql-js without type-graphql's wrapper (graphql/direct-resolvers.ts). */
export const directResolvers = { Post: postEmbeds, Comment: commentEmbeds };

/** Every feature's REST routes. */
export function restRoutes(services: Services): RouteDef[] {
  return [
    // The busiest paths first: Express tests routes in this order.
    ...postRoutes(services),
    ...commentRoutes(services),
    ...trashRoutes(services),
    ...tenantPostRoutes(services),
    ...userRoutes(services),
    ...authRoutes(services),
  ];
}
