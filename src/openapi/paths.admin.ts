import { listRequestFromQuery } from '../core/pagination';
import { listOf } from './schemas';
import { LIST_PARAMS } from './parameters';
import { AUTH_401, DB_503, operation } from './operation';
import { adminUserExample, pageExample, rejected, userExample } from './examples';
import { ref, type Paths } from './types';
import { IF_MATCH_NOTE } from './paths.posts';

const GUARD = { 401: AUTH_401, 403: ['Forbidden'] };

/** Role `admin` only; the role check answers 403 before anything is looked up. */
export const adminPaths: Paths = {
  '/admin/users': {
    get: operation({
      id: 'adminUsers',
      tag: 'admin',
      summary: 'List users',
      description: 'By id ascending, 20 per page (soft-deleted users excluded). The response format follows `paginate`.',
      auth: true,
      params: LIST_PARAMS,
      success: { status: 200, description: 'A page of users in the requested format', schema: listOf('User'), example: pageExample([userExample, adminUserExample], 20, 2) },
      errors: { ...GUARD, 422: ['Validation failed'], ...DB_503 },
      invalid: rejected({ query: { paginate: 'cursor', direction: 'up' } }, ({ query }) => listRequestFromQuery(query)),
    }),
  },
  '/admin/users/{id}': {
    delete: operation({
      id: 'deleteUser',
      tag: 'admin',
      summary: 'Soft-delete a user',
      description: `The user can no longer log in and their tokens stop working; their email stays taken. ${IF_MATCH_NOTE} (The tag is the user's: GraphQL \`adminUsers { data { etag } }\`, or what \`GET /auth/me\` sends that user.)`,
      auth: true,
      params: ['UserId'],
      success: { status: 200, description: 'Deleted', schema: ref('Message'), example: { message: 'User deleted' } },
      errors: { ...GUARD, 404: ['User not found'], ...DB_503 },
      conditional: true,
    }),
  },
  '/admin/users/{id}/restore': {
    patch: operation({
      id: 'restoreUser',
      tag: 'admin',
      summary: 'Restore a soft-deleted user',
      auth: true,
      params: ['UserId'],
      success: { status: 200, description: 'The restored user', schema: ref('User'), example: userExample },
      tagged: true,
      errors: { ...GUARD, 404: ['User not found'], ...DB_503 },
    }),
  },
};
