import { listRequestFromQuery } from '../core/pagination';
import { parseAll, parseInput } from '../core/validation';
import { postFiltersInput } from '../modules/post/post.inputs';
import { listOf } from './schemas';
import { LIST_PARAMS } from './parameters';
import { AUTH_401, DB_503, operation } from './operation';
import { commentedPostExample, commentExample, newPostExample, pageExample, publishedPostExample, rejected } from './examples';
import { ref, type Paths } from './types';

const OWNER = { 401: AUTH_401, 404: ['Post not found'], 403: ['Forbidden'] };
const OWNER_NOTE = 'The post\'s author, or role `moderator`/`admin`; others get 403.';

export const postPaths: Paths = {
  '/posts': {
    get: operation({
      id: 'listPosts',
      tag: 'posts',
      summary: 'List posts',
      description: 'Newest first (created_at, then id), 10 per page, each with its author, comments (oldest first) and comment count. The response format follows `paginate`.',
      params: [...LIST_PARAMS, 'Published', 'Author'],
      success: { status: 200, description: 'A page of posts in the requested format', schema: listOf('Post'), example: pageExample([commentedPostExample], 10, 1) },
      errors: { 422: ['Validation failed'], ...DB_503 },
      // As GET /posts parses its query: the filters and the paging together, every problem listed.
      invalid: rejected({ query: { page: '0', published: 'maybe' } }, ({ query }) => parseAll(() => parseInput(postFiltersInput, query), () => listRequestFromQuery(query))),
      cached: true,
    }),
    post: operation({
      id: 'createPost',
      tag: 'posts',
      summary: 'Create a post',
      description: 'Unpublished; the slug comes from the title (`-2`, `-3`, … when taken); the author is the caller.',
      auth: true,
      body: ref('PostInput'),
      success: { status: 201, description: 'The created post', schema: ref('Post'), example: newPostExample },
      errors: { 401: AUTH_401, ...DB_503 },
      invalid: { body: { title: ' ', body: '' } },
      idempotent: true,
    }),
  },
  '/posts/{id}': {
    get: operation({
      id: 'getPost',
      tag: 'posts',
      summary: 'One post',
      params: ['PostId'],
      success: { status: 200, description: 'The post with its author and comments', schema: ref('Post'), example: commentedPostExample },
      errors: { 404: ['Post not found'], ...DB_503 },
      cached: true,
    }),
    delete: operation({
      id: 'deletePost',
      tag: 'posts',
      summary: 'Move a post to the trash',
      description: OWNER_NOTE,
      auth: true,
      params: ['PostId'],
      success: { status: 200, description: 'Trashed', schema: ref('Message'), example: { message: 'Post deleted' } },
      errors: { ...OWNER, ...DB_503 },
    }),
  },
  '/posts/{id}/publish': {
    patch: operation({
      id: 'publishPost',
      tag: 'posts',
      summary: 'Publish a post',
      description: `${OWNER_NOTE} Publishing a published post returns it unchanged.`,
      auth: true,
      params: ['PostId'],
      success: { status: 200, description: 'The post, published', schema: ref('Post'), example: publishedPostExample },
      errors: { ...OWNER, ...DB_503 },
    }),
  },
  '/posts/{id}/restore': {
    patch: operation({
      id: 'restorePost',
      tag: 'posts',
      summary: 'Restore a trashed post',
      description: `${OWNER_NOTE} Looked up including trashed posts; an active post is returned unchanged.`,
      auth: true,
      params: ['PostId'],
      success: { status: 200, description: 'The restored post', schema: ref('Post'), example: commentedPostExample },
      errors: { ...OWNER, ...DB_503 },
    }),
  },
  '/posts/{id}/comments': {
    post: operation({
      id: 'addComment',
      tag: 'posts',
      summary: 'Comment on a post',
      description: 'A trashed post answers 404.',
      auth: true,
      params: ['PostId'],
      body: ref('CommentInput'),
      success: { status: 201, description: 'The created comment', schema: ref('Comment'), example: commentExample },
      errors: { 401: AUTH_401, 404: ['Post not found'], ...DB_503 },
      invalid: { body: { body: '' } },
      idempotent: true,
    }),
  },
};
