import type { RouteDef } from '../http/routes';
import { AuthResolver } from './auth/auth.resolver';
import { authRoutes } from './auth/auth.routes';
import { UserResolver } from './user/user.resolver';
import { userRoutes } from './user/user.routes';
import type { Services } from './services';

/** Every feature's GraphQL resolvers (classes; constructed with Services by graphql/schema.ts). */
export const resolvers = [AuthResolver, UserResolver] as const;

/** Every feature's REST routes. */
export function restRoutes(services: Services): RouteDef[] {
  return [...authRoutes(services), ...userRoutes(services)];
}
