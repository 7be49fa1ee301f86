import { listRequestFromQuery } from '../core/pagination';
import { parseAll, parseInput } from '../core/validation';
import { postFiltersInput, updatePostInput } from '../modules/post/post.inputs';
import { createCommentInput } from '../modules/comment/comment.inputs';
import { listOf } from './schemas';
import { LIST_PARAMS } from './parameters';
import { AUTH_401, DB_503, operation } from './operation';
import { commentedPostExample, commentExample, editedCommentExample, editedPostExample, newPostExample, pageExample, publishedPostExample, rejected } from './examples';
import { ref, type Paths } from './types';

const OWNER = { 401: AUTH_401, 404: ['Post not found'], 403: ['Forbidden'] };
const OWNER_NOTE = 'The post\'s author, or role `moderator`/`admin`; others get 403.';
/** What every conditional write adds to its description. */
export const IF_MATCH_NOTE = 'Takes `If-Match` (the `ETag` of an earlier answer, or `*`): a stale tag answers 412 with the current `ETag` and writes nothing; checked after 401/404/403 and before 422.';

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
      tagged: true,
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
      tagged: true,
    }),
    patch: operation({
      id: 'updatePost',
      tag: 'posts',
      summary: 'Edit a post',
      description: `${OWNER_NOTE} Title and/or body, at least one; the slug does not change. A trashed post answers 404. ${IF_MATCH_NOTE}`,
      auth: true,
      params: ['PostId'],
      body: ref('PostEditInput'),
      success: { status: 200, description: 'The edited post', schema: ref('Post'), example: editedPostExample },
      errors: { ...OWNER, ...DB_503 },
      invalid: rejected({ body: {} }, ({ body }) => parseInput(updatePostInput, body)),
      tagged: true,
      conditional: true,
    }),
    delete: operation({
      id: 'deletePost',
      tag: 'posts',
      summary: 'Move a post to the trash',
      description: `${OWNER_NOTE} ${IF_MATCH_NOTE}`,
      auth: true,
      params: ['PostId'],
      success: { status: 200, description: 'Trashed', schema: ref('Message'), example: { message: 'Post deleted' } },
      errors: { ...OWNER, ...DB_503 },
      conditional: true,
    }),
  },
  '/posts/{id}/publish': {
    patch: operation({
      id: 'publishPost',
      tag: 'posts',
      summary: 'Publish a post',
      description: `${OWNER_NOTE} Publishing a published post returns it unchanged. ${IF_MATCH_NOTE}`,
      auth: true,
      params: ['PostId'],
      success: { status: 200, description: 'The post, published', schema: ref('Post'), example: publishedPostExample },
      errors: { ...OWNER, ...DB_503 },
      tagged: true,
      conditional: true,
    }),
  },
  '/posts/{id}/restore': {
    patch: operation({
      id: 'restorePost',
      tag: 'posts',
      summary: 'Restore a trashed post',
      description: `${OWNER_NOTE} Looked up including trashed posts; an active post is returned unchanged. ${IF_MATCH_NOTE}`,
      auth: true,
      params: ['PostId'],
      success: { status: 200, description: 'The restored post', schema: ref('Post'), example: commentedPostExample },
      errors: { ...OWNER, ...DB_503 },
      tagged: true,
      conditional: true,
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
      tagged: true,
      errors: { 401: AUTH_401, 404: ['Post not found'], ...DB_503 },
      invalid: { body: { body: '' } },
      idempotent: true,
    }),
  },
  '/comments/{id}': {
    patch: operation({
      id: 'updateComment',
      tag: 'posts',
      summary: 'Edit a comment',
      description: `The comment's author, or role \`moderator\`/\`admin\`; others get 403. A comment on a trashed post answers 404. ${IF_MATCH_NOTE}`,
      auth: true,
      params: ['CommentId'],
      body: ref('CommentInput'),
      success: { status: 200, description: 'The edited comment', schema: ref('Comment'), example: editedCommentExample },
      errors: { 401: AUTH_401, 404: ['Comment not found'], 403: ['Forbidden'], ...DB_503 },
      invalid: rejected({ body: { body: '' } }, ({ body }) => parseInput(createCommentInput, body)),
      tagged: true,
      conditional: true,
    }),
    delete: operation({
      id: 'deleteComment',
      tag: 'posts',
      summary: 'Delete a comment for good',
      description: `The comment's author, the post's author, or role \`moderator\`/\`admin\`; others get 403. A comment on a trashed post answers 404. ${IF_MATCH_NOTE}`,
      auth: true,
      params: ['CommentId'],
      success: { status: 200, description: 'Deleted', schema: ref('Message'), example: { message: 'Comment deleted' } },
      errors: { 401: AUTH_401, 404: ['Comment not found'], 403: ['Forbidden'], ...DB_503 },
      conditional: true,
    }),
  },
};
