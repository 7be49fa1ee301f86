import type { ZodType } from 'zod';
import { forgotPasswordInput, loginInput, registerInput, resetPasswordInput } from '../modules/auth/auth.inputs';
import { createCommentInput } from '../modules/comment/comment.inputs';
import { createPostInput, postFiltersInput } from '../modules/post/post.inputs';
import { createTenantPostInput } from '../modules/tenant-post/tenant-post.inputs';

/**
 * The zod schema behind each GraphQL field's arguments: the same object REST parses its body or
 * query with. When graphql-js refuses an argument before the resolver runs (wrong type, null,
 * missing), argument-errors.ts runs this schema over the raw arguments so the answer lists the
 * same fields with the same messages as REST for the same mistake. A field absent here still gets
 * field errors, with generic messages from its GraphQL type. test/graphql-arguments.test.ts checks
 * that every key is a real field and every schema key one of its arguments.
 */
export const ARGUMENT_RULES: Readonly<Record<string, ZodType>> = {
  'Mutation.register': registerInput,
  'Mutation.login': loginInput,
  'Mutation.forgotPassword': forgotPasswordInput,
  'Mutation.resetPassword': resetPasswordInput,
  'Mutation.createPost': createPostInput,
  'Mutation.addComment': createCommentInput,
  'Mutation.createTenantPost': createTenantPostInput,
  'Query.posts': postFiltersInput,
  'Query.postsSimple': postFiltersInput,
  'Query.postsCursor': postFiltersInput,
};
