import { AppError, type FieldError } from '../core/errors';
import { entityTag } from '../core/etag';

/**
 * The document's examples. Success examples are one small, consistent blog (Ada's post with
 * Grace's comment); every example is checked against its response schema
 * (test/openapi-examples.test.ts). The 422 examples are not written by hand: each is what the
 * service's own parser answers to a wrong request of that operation (`rejected`), and the test
 * sends that request to a running service and expects that very answer.
 */
const at = (minute: number) => `2026-11-22T10:${String(minute).padStart(2, '0')}:00.000Z`;

export const userExample = { id: 1, name: 'Ada', email: 'ada@example.com', role: 'user', email_verified_at: null, created_at: at(0), updated_at: at(0) };
export const adminUserExample = { id: 2, name: 'Grace', email: 'grace@example.com', role: 'admin', email_verified_at: at(1), created_at: at(1), updated_at: at(1) };
// A whole HS256 token (signed with a secret that is not the service's): a client that uses the
// example as a header, a mock server's answer, must be able to send it (no `…`, ASCII only).
export const tokenExample = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpZCI6MSwidHYiOjAsImlhdCI6MTc5NTM0MTYwMCwiZXhwIjoxNzk1OTQ2NDAwfQ.MZlarHBLnDrtD8ebNAIXfYOHiKz0UtT64OnhCivf-LY';

export const commentExample = {
  id: 1,
  post_id: 12,
  user_id: 2,
  body: 'Welcome!',
  created_at: at(30),
  updated_at: at(30),
  user: { id: 2, name: 'Grace' },
};

/** As created: unpublished, no comments yet. */
export const newPostExample = {
  id: 12,
  user_id: 1,
  title: 'Hello, world',
  slug: 'hello-world',
  body: 'My first post.',
  published: false,
  published_at: null,
  created_at: at(10),
  updated_at: at(10),
  deleted_at: null,
  user: { id: 1, name: 'Ada' },
  comments: [],
  comments_count: 0,
};
export const publishedPostExample = { ...newPostExample, published: true, published_at: at(20), updated_at: at(20) };
export const commentedPostExample = { ...publishedPostExample, comments: [commentExample], comments_count: 1 };
export const trashedPostExample = { ...commentedPostExample, deleted_at: at(40), updated_at: at(40) };

/** After `PATCH /posts/12 {"title": "Hello again"}`: the slug stays. */
export const editedPostExample = { ...commentedPostExample, title: 'Hello again', updated_at: at(50) };
export const editedCommentExample = { ...commentExample, body: 'Welcome back!', updated_at: at(51) };

/** The ETag of commentedPostExample's JSON: what GET /posts/12 would carry for it. */
export const etagExample = entityTag(JSON.stringify(commentedPostExample));

export const tenantPostExample = { id: 3, tenant_id: 1, title: 'Acme news', body: 'Only tenant 1 sees this.', created_at: at(5), updated_at: at(5) };

/** The `page` format (the default) holding `data` as the first of several pages. */
export function pageExample<T>(data: T[], perPage: number, total: number) {
  return { data, total, perPage, currentPage: 1, lastPage: Math.max(1, Math.ceil(total / perPage)), from: data.length ? 1 : null, to: data.length || null, nextPage: total > perPage ? 2 : null };
}

/** A wrong request of one operation: its JSON body and/or its query string. */
export interface InvalidRequest {
  body?: unknown;
  query?: Record<string, string>;
}

/**
 * The 422 the service answers to `request`, computed by `parse`, the very parsing its route does;
 * throws when that input is accepted (the example would be false).
 */
export function rejected(request: InvalidRequest, parse: (request: InvalidRequest) => unknown): InvalidRequest & { answer: { message: string; errors: FieldError[] } } {
  try {
    parse(request);
  } catch (err) {
    if (err instanceof AppError && err.kind === 'VALIDATION' && err.errors) return { ...request, answer: { message: err.message, errors: err.errors } };
    throw err;
  }
  throw new Error(`example of a rejected request was accepted: ${JSON.stringify(request)}`);
}
