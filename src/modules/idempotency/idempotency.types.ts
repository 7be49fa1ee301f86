/** The GraphQL argument's description, the same on createPost, addComment and createTenantPost. */
export const IDEMPOTENCY_KEY_ARG =
  'Safe retries: 1–255 visible ASCII characters, scoped to the caller. A repeat with the same arguments returns the object first created (read now) and writes nothing; with other arguments BAD_USER_INPUT; while the first still runs CONFLICT. Kept IDEMPOTENCY_KEY_HOURS (default 24).';
