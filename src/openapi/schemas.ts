import { requestBodySchemas } from './request-bodies';
import { ref, type Schema } from './types';

/** The REST JSON shapes: snake_case records, camelCase pagination keys. */
const timestamp: Schema = { type: 'string', format: 'date-time', description: 'ISO-8601 UTC' };
const nullableTimestamp: Schema = { type: ['string', 'null'], format: 'date-time', description: 'ISO-8601 UTC, or null' };
const id: Schema = { type: 'integer', minimum: 1 };
const nullable = (schema: Schema): Schema => ({ anyOf: [schema, { type: 'null' }] });

const object = (properties: Record<string, Schema>, description?: string): Schema => ({
  type: 'object',
  ...(description ? { description } : {}),
  required: Object.keys(properties),
  properties,
  additionalProperties: false,
});

/** page / simple / cursor result of one record type. */
function pages(item: string): Record<string, Schema> {
  const data = { type: 'array', items: ref(item) };
  return {
    [`${item}Page`]: object(
      {
        data,
        total: { type: 'integer', minimum: 0 },
        perPage: { type: 'integer', minimum: 1 },
        currentPage: { type: 'integer', minimum: 1 },
        lastPage: { type: 'integer', minimum: 1 },
        from: { type: ['integer', 'null'], minimum: 1, description: 'position of the first record (1-based); null on an empty page' },
        to: { type: ['integer', 'null'], minimum: 1, description: 'position of the last record; null on an empty page' },
        nextPage: { type: ['integer', 'null'], minimum: 2, description: 'null on the last page' },
      },
      '`paginate=page` (default): total count and page numbers.',
    ),
    [`${item}SimplePage`]: object({ data, hasMore: { type: 'boolean' } }, '`paginate=simple`: no total, only whether another page follows.'),
    [`${item}CursorPage`]: object(
      {
        data,
        nextCursor: { type: ['string', 'null'], description: 'pass as `cursor` for the next slice; null when there is none' },
        prevCursor: { type: ['string', 'null'], description: 'pass as `cursor` for the previous slice; null when there is none' },
        hasNextPage: { type: 'boolean' },
        hasPrevPage: { type: 'boolean' },
        perPage: { type: 'integer', minimum: 1 },
        path: { type: 'string', description: 'the request path' },
      },
      '`paginate=cursor`: keyset on id, stable under inserts and deletes.',
    ),
  };
}

/** Any of the three formats, chosen by the `paginate` query parameter. */
export const listOf = (item: string): Schema => ({
  oneOf: [ref(`${item}Page`), ref(`${item}SimplePage`), ref(`${item}CursorPage`)],
});

export const schemas: Record<string, Schema> = {
  User: object(
    {
      id,
      name: { type: 'string', minLength: 1, maxLength: 255 },
      email: { type: 'string', format: 'email', maxLength: 255 },
      role: { type: 'string', enum: ['user', 'admin', 'moderator'] },
      email_verified_at: nullableTimestamp,
      created_at: timestamp,
      updated_at: timestamp,
    },
    'A user. Never carries the password.',
  ),
  Author: object({ id, name: { type: 'string' } }, 'The public view of a user embedded in posts and comments (no email).'),
  Comment: object({
    id,
    post_id: id,
    user_id: id,
    body: { type: 'string', minLength: 1, maxLength: 10000 },
    created_at: timestamp,
    updated_at: timestamp,
    user: { ...nullable(ref('Author')), description: 'null when the author is soft-deleted' },
  }),
  Post: object({
    id,
    user_id: id,
    title: { type: 'string', minLength: 1, maxLength: 255 },
    slug: { type: 'string', minLength: 1, maxLength: 255 },
    body: { type: 'string', minLength: 1, maxLength: 100000 },
    published: { type: 'boolean' },
    published_at: nullableTimestamp,
    created_at: timestamp,
    updated_at: timestamp,
    deleted_at: { ...nullableTimestamp, description: 'set while the post is in the trash' },
    user: { ...nullable(ref('Author')), description: 'null when the author is soft-deleted' },
    comments: { type: 'array', items: ref('Comment'), description: 'oldest first' },
    comments_count: { type: 'integer', minimum: 0 },
  }),
  TenantPost: object({
    id,
    tenant_id: id,
    title: { type: 'string', minLength: 1, maxLength: 255 },
    body: { type: 'string', minLength: 1, maxLength: 100000 },
    created_at: timestamp,
    updated_at: timestamp,
  }),
  AuthResult: object({ user: ref('User'), token: { type: 'string', description: 'JWT HS256 access token, valid 7 days' } }),
  Message: object({ message: { type: 'string' } }),
  PasswordChanged: object(
    { message: { type: 'string', const: 'Password changed' }, token: { type: 'string', description: 'A fresh access token: every token issued before the change is revoked' } },
  ),
  PurgeResult: object({ message: { type: 'string', examples: ['Permanently deleted 3 posts'] }, count: { type: 'integer', minimum: 0 } }),
  FieldError: object({
    field: { type: ['string', 'null'], description: 'the input field; null for the body as a whole' },
    message: { type: 'string' },
  }),
  Error: object({ message: { type: 'string' } }, 'Every error other than 422.'),
  ValidationError: object({ message: { type: 'string' }, errors: { type: 'array', minItems: 1, items: ref('FieldError') } }, '422: every problem listed.'),
  // Request bodies: derived from the zod inputs (request-bodies.ts).
  ...requestBodySchemas,
  GraphQLRequest: {
    type: 'object',
    description: '`query`, or `documentId` naming a trusted document, or `extensions.persistedQuery` (automatic persisted queries)',
    properties: {
      query: { type: 'string' },
      documentId: { type: 'string', description: '`sha256:<hex>` or `<hex>` of a document in the GRAPHQL_DOCUMENTS manifest' },
      variables: { type: ['object', 'null'] },
      operationName: { type: ['string', 'null'] },
      extensions: { type: ['object', 'null'] },
    },
  },
  GraphQLResponse: {
    type: 'object',
    properties: {
      data: { type: ['object', 'null'] },
      errors: {
        type: 'array',
        items: {
          type: 'object',
          required: ['message'],
          properties: { message: { type: 'string' }, extensions: { type: 'object', properties: { code: { type: 'string' } } } },
        },
      },
    },
  },
  ...pages('Post'),
  ...pages('User'),
};
