import { etagExample } from './examples';
import { parameters } from './parameters';
import { adminPaths } from './paths.admin';
import { authPaths } from './paths.auth';
import { opsPaths } from './paths.ops';
import { postPaths } from './paths.posts';
import { tenantPaths } from './paths.tenant';
import { trashPaths } from './paths.trash';
import { schemas } from './schemas';
import type { Paths } from './types';

export interface OpenApiDocument {
  openapi: string;
  info: Record<string, unknown>;
  servers?: { url: string; description?: string }[];
  tags: { name: string; description: string }[];
  paths: Paths;
  components: Record<string, Record<string, unknown>>;
}

const DESCRIPTION = `Accounts, a blog with comments, a trash area and tenant-scoped posts. The same operations are
offered over GraphQL at \`/graphql\` (see \`schema/schema.graphql\`).

- **Authentication**: \`Authorization: Bearer <token>\`, the token from register or login (JWT HS256, 7 days).
- **Errors**: \`{"message": "..."}\`; 422 adds \`errors: [{field, message}]\` listing every problem
  (\`field\` is null for the body as a whole). Unknown route → 404 \`Not found\`; known path, other
  method → 405 \`Method not allowed\` with \`Allow\`; body over 1 MB → 413; malformed JSON → 400.
  Check order: 401 → 404 → 403 → 422.
- **Lists** (\`/posts\`, \`/trash\`, \`/admin/users\`): \`paginate=page\` (default), \`simple\` or \`cursor\`
  selects the response shape. Pagination keys are camelCase; records are snake_case.
- **Request ids**: every answer carries \`x-request-id\` (yours when you send a sane one), also in the logs.
- **Caching**: \`GET /posts\`, \`GET /posts/{id}\` and \`GET /graphql\` queries, asked without \`Authorization\` and
  \`x-tenant-id\`, answer with a strong \`ETag\` and \`Cache-Control: public\` and take \`If-None-Match\` (304 while
  unchanged); every other answer is \`Cache-Control: no-store\`.`;

/**
 * package.json's `UNLICENSED`: all rights reserved. No SPDX licence applies, so the identifier is
 * an SPDX `LicenseRef-` (the expression syntax for a licence outside the list).
 */
const LICENSE = { name: 'Proprietary (UNLICENSED): all rights reserved', identifier: 'LicenseRef-Proprietary' };

/** The OpenAPI 3.1 document of every route of the service, built once. */
export function buildOpenApiDocument(): OpenApiDocument {
  return {
    openapi: '3.1.0',
    info: { title: 'Blog API', version: '1.0.0', description: DESCRIPTION, license: LICENSE },
    // Relative: the origin that serves this document (`npm start` serves it at http://localhost:3000).
    servers: [{ url: '/', description: 'This service: the origin that serves this document' }],
    tags: [
      { name: 'auth', description: 'Registration, login, password reset, email verification' },
      { name: 'posts', description: 'Blog posts and comments' },
      { name: 'trash', description: 'Soft-deleted posts (moderators and admins)' },
      { name: 'admin', description: 'User administration (admins)' },
      { name: 'tenant', description: 'Tenant-scoped posts (tenant from `x-tenant-id`)' },
      { name: 'graphql', description: 'The GraphQL surface' },
      { name: 'operations', description: 'Health, readiness, metrics, documentation' },
    ],
    paths: { ...authPaths, ...postPaths, ...trashPaths, ...adminPaths, ...tenantPaths, ...opsPaths },
    components: {
      schemas,
      parameters,
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Access token from POST /auth/register or /auth/login' } },
      headers: {
        RequestId: { description: 'The request id (the caller\'s `x-request-id` when sane, else a generated UUID)', schema: { type: 'string' } },
        ETag: {
          description:
            'Strong entity tag of this answer (a hash of its JSON text). One post, comment or user carries it on every answer (the same JSON has the same tag on every route, and GraphQL `etag` is that tag): send it back as `If-Match` to write only that version. Lists carry it for anonymous callers only.',
          schema: { type: 'string', pattern: '^"[^"]*"$', example: etagExample },
        },
        CacheControl: {
          description: '`public, max-age=N` (N = PUBLIC_CACHE_SECONDS; `public, no-cache` when 0) for an anonymous caller; `no-store` for a request with `Authorization` or `x-tenant-id`, as on every other answer',
          schema: { type: 'string' },
        },
        IdempotentReplayed: {
          description: '`true` when this is the stored answer of an earlier request with the same `Idempotency-Key` (nothing was written this time); absent otherwise',
          schema: { type: 'string', enum: ['true'] },
        },
        Vary: { description: 'The request headers the answer depends on besides the URL: `Authorization, X-Tenant-Id` (GraphQL adds `Accept`)', schema: { type: 'string' } },
      },
    },
  };
}
