import { z } from 'zod';
import { bodyObject, text } from '../../core/validation';

export const createCommentInput = bodyObject({
  body: text('body', 1, 10_000),
});
export type CreateCommentInput = z.output<typeof createCommentInput>;

/** An edit takes the same body. */
export const commentBodyInput = createCommentInput;
