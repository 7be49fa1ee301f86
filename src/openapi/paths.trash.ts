import { listRequestFromQuery } from '../core/pagination';
import { listOf } from './schemas';
import { LIST_PARAMS } from './parameters';
import { AUTH_401, DB_503, operation } from './operation';
import { commentedPostExample, pageExample, rejected, trashedPostExample } from './examples';
import { ref, type Paths } from './types';

const GUARD = { 401: AUTH_401, 403: ['Forbidden'] };
const ROLE = 'Role `moderator` or `admin`.';

export const trashPaths: Paths = {
  '/trash': {
    get: operation({
      id: 'listTrash',
      tag: 'trash',
      summary: 'List trashed posts',
      description: `${ROLE} Most recently trashed first (deleted_at, then id), 20 per page. The response format follows \`paginate\`.`,
      auth: true,
      params: LIST_PARAMS,
      success: { status: 200, description: 'A page of trashed posts in the requested format', schema: listOf('Post'), example: pageExample([trashedPostExample], 20, 1) },
      errors: { ...GUARD, 422: ['Validation failed'], ...DB_503 },
      invalid: rejected({ query: { paginate: 'all' } }, ({ query }) => listRequestFromQuery(query)),
    }),
    delete: operation({
      id: 'purgeTrash',
      tag: 'trash',
      summary: 'Permanently delete every trashed post',
      description: `${ROLE} Their comments go too.`,
      auth: true,
      success: { status: 200, description: '`Permanently deleted N posts` (`1 post` when N is 1)', schema: ref('PurgeResult'), example: { message: 'Permanently deleted 2 posts', count: 2 } },
      errors: { ...GUARD, ...DB_503 },
    }),
  },
  '/trash/{id}': {
    delete: operation({
      id: 'deleteFromTrash',
      tag: 'trash',
      summary: 'Permanently delete one trashed post',
      description: ROLE,
      auth: true,
      params: ['PostId'],
      success: { status: 200, description: 'Gone', schema: ref('Message'), example: { message: 'Permanently deleted' } },
      errors: { ...GUARD, 404: ['Not in trash'], ...DB_503 },
    }),
  },
  '/trash/{id}/restore': {
    patch: operation({
      id: 'restoreFromTrash',
      tag: 'trash',
      summary: 'Restore a trashed post',
      description: ROLE,
      auth: true,
      params: ['PostId'],
      success: { status: 200, description: 'The restored post', schema: ref('Post'), example: commentedPostExample },
      errors: { ...GUARD, 404: ['Not in trash'], ...DB_503 },
    }),
  },
};
