import { bodyObject, text } from '../../core/validation';

/**
 * The one schema for creating a tenant post, used by REST and GraphQL alike.
 * `tenant_id` is not a field: unknown keys are dropped, the tenant comes from the request.
 */
export const createTenantPostInput = bodyObject({
  title: text('title', 1, 255),
  body: text('body', 1, 100_000),
});

