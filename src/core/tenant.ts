import { parsePositiveInt } from './validation';

/**
 * Where a request's tenant comes from. Today the `x-tenant-id` header, which assumes a gateway
 * in front sets it (clients must not be able to pick their tenant); a subdomain or a token
 * claim is another function of this shape.
 */
export type TenantResolver = (req: { headers: Record<string, string | string[] | undefined>; hostname?: string }) => number | null;

export const headerTenantResolver: TenantResolver = (req) => {
  const value = req.headers['x-tenant-id'];
  return typeof value === 'string' ? parsePositiveInt(value.trim()) : null;
};
