import { bodyObject, text } from '../../core/validation';

export const createCommentInput = bodyObject({
  body: text('body', 1, 10_000),
});
