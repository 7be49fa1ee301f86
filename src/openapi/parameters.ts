import { etagExample } from './examples';
import type { Parameter } from './types';

const int32 = { type: 'integer', minimum: 1, maximum: 2147483647 };

/** Shared parameters; operations refer to them by name. */
export const parameters: Record<string, Parameter> = {
  Paginate: {
    name: 'paginate',
    in: 'query',
    description: 'Response format: `page` (default; total and page numbers), `simple` (hasMore) or `cursor` (keyset on id). Other values → 422.',
    schema: { type: 'string', enum: ['page', 'simple', 'cursor'], default: 'page' },
  },
  Page: { name: 'page', in: 'query', description: 'Page number for `page` and `simple` (default 1); not a positive integer → 422.', schema: { ...int32, default: 1 } },
  Cursor: { name: 'cursor', in: 'query', description: '`cursor` format only: a `nextCursor` or `prevCursor` from an earlier answer; absent for the first slice. Anything else → 422.', schema: { type: 'string' } },
  Direction: { name: 'direction', in: 'query', description: '`cursor` format only: order by id (default `desc`).', schema: { type: 'string', enum: ['asc', 'desc'], default: 'desc' } },
  Published: {
    name: 'published',
    in: 'query',
    description: '`true|1|yes|on` lists only published posts; `false|0|no|off` does not filter. Other values → 422.',
    schema: { type: 'string', enum: ['true', '1', 'yes', 'on', 'false', '0', 'no', 'off'] },
  },
  Author: { name: 'author', in: 'query', description: 'Only posts of this user id; not a positive integer → 422.', schema: int32 },
  PostId: { name: 'id', in: 'path', required: true, description: 'Post id; anything but a positive 32-bit integer → 404.', schema: int32 },
  UserId: { name: 'id', in: 'path', required: true, description: 'User id; anything but a positive 32-bit integer → 404.', schema: int32 },
  TenantId: {
    name: 'x-tenant-id',
    in: 'header',
    required: true,
    description: 'The tenant, a positive integer; missing or malformed → 401 `Unknown tenant`. Set by the gateway in front of the service, not by end users.',
    schema: { type: 'string', pattern: '^[1-9][0-9]*$', example: '1' },
  },
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    description: 'An `ETag` from an earlier answer (or several, comma-separated, or `*`): 304 without a body while the answer is unchanged. Only anonymous requests (no `Authorization`, no `x-tenant-id`) are answered 304.',
    schema: { type: 'string' },
  },
  IfMatch: {
    name: 'If-Match',
    in: 'header',
    description:
      'Write only this version: the `ETag` of an earlier answer for this resource (or several, comma-separated; weak tags never match), or `*` for any. A stale tag answers 412 with the current `ETag` and writes nothing. Without it the write is unconditional, unless the service runs with `REQUIRE_IF_MATCH=true` (then 428).',
    schema: { type: 'string' },
    example: etagExample,
  },
  CommentId: { name: 'id', in: 'path', required: true, description: 'Comment id; anything but a positive 32-bit integer → 404.', schema: int32 },
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    description:
      'Safe retries: 1–255 visible ASCII characters (else 422), scoped to the signed-in caller (the user; for tenant posts the user within the tenant); an anonymous tenant post with a key → 422. The first request runs and its answer is kept IDEMPOTENCY_KEY_HOURS (default 24); a repeat with the same method, path and body gets that answer again with `Idempotent-Replayed: true` and writes nothing; the same key with another request → 422; a repeat while the first still runs → 409. Failed requests are not kept.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[!-~]+$', example: 'c0ffee-2026-11-26-retry-1' },
  },
  VerifyToken: { name: 'token', in: 'path', required: true, description: 'The verification token from the email (never logged).', schema: { type: 'string' } },
};

export const LIST_PARAMS = ['Paginate', 'Page', 'Cursor', 'Direction'];
