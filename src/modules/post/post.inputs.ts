import { z } from 'zod';
import { bodyObject, parsePositiveInt, text } from '../../core/validation';

export const createPostInput = bodyObject({
  title: text('title', 1, 255),
  body: text('body', 1, 100_000),
});
/** An edit: title and body as on create, each optional, at least one. */
export const updatePostFields = bodyObject({
  title: text('title', 1, 255).optional(),
  body: text('body', 1, 100_000).optional(),
});
export const updatePostInput = updatePostFields.refine((v) => v.title !== undefined || v.body !== undefined, { error: 'title or body is required' });

const TRUTHY = ['true', '1', 'yes', 'on'];
const FALSY = ['false', '0', 'no', 'off'];

/**
 * The list filters of GET /posts and the GraphQL post lists. REST gives strings, GraphQL gives a
 * Boolean and an Int; both go through this one schema. `published` true filters by the published
 * scope, false does not filter; any other value is a 422.
 */
export const postFiltersInput = z.object({
  published: z
    .union([z.boolean(), z.string()], { error: 'published must be true or false' })
    .nullish()
    .transform((v, ctx) => {
      if (v === undefined || v === null || typeof v === 'boolean') return v === true;
      const s = v.toLowerCase();
      if (TRUTHY.includes(s)) return true;
      if (FALSY.includes(s)) return false;
      ctx.addIssue({ code: 'custom', message: 'published must be one of true, 1, yes, on, false, 0, no, off' });
      return z.NEVER;
    }),
  author: z
    .unknown()
    // Optional on the way in (an absent key is allowed), null on the way out.
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === null) return null;
      const id = parsePositiveInt(v);
      if (id === null) {
        ctx.addIssue({ code: 'custom', message: 'author must be a positive integer' });
        return z.NEVER;
      }
      return id;
    }),
});
