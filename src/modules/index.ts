import type { RouteDef } from '../http/routes';
import { AuthResolver } from './auth/auth.resolver';
import { authRoutes } from './auth/auth.routes';
import type { Services } from './services';
import { TenantPostResolver } from './tenant-post/tenant-post.resolver';
import { tenantPostRoutes } from './tenant-post/tenant-post.routes';

/** Every feature's GraphQL resolvers (classes; constructed with Services by graphql/schema.ts). */
export const resolvers = [AuthResolver, TenantPostResolver] as const;

/** Every feature's REST routes. */
export function restRoutes(services: Services): RouteDef[] {
  return [...authRoutes(services), ...tenantPostRoutes(services)];
}
