import type { RequestContext } from '../core/context';
import { entityTag } from '../core/etag';
import { AppError } from '../core/errors';
import { loader } from '../core/loaders';
import { commentJsons } from '../modules/comment/comment.repository';
import { postJsons } from '../modules/post/post.repository';
import { userJsons } from '../modules/user/user.repository';

/** The descriptions of every `etag` field and `ifMatch` argument. */
export const ETAG = "The strong ETag of this object's REST answer (the same tag REST sends): pass it as `ifMatch` to write only this version.";
export const IF_MATCH = 'Write only if the current `etag` is one of these (a list as in If-Match; `*` for any): else PRECONDITION_FAILED with the current tag in extensions.etag.';

/**
 * GraphQL's `etag` fields: the tag of the object's REST answer, built by the same builder the
 * REST routes answer with (each module's repository) and hashed by the same function (core/etag.ts),
 * so a tag read on one surface is a valid If-Match / `ifMatch` on the other. One statement per
 * kind for a whole list (a DataLoader per request); cleared with the other loaders after a write.
 */
function etagLoader(ctx: RequestContext, kind: 'Post' | 'Comment' | 'User', read: (ids: readonly number[]) => Promise<Map<number, string>>) {
  return loader<number, string>(ctx, `etag:${kind}`, async (ids) => {
    const jsons = await read(ids);
    // The tag is read by a statement of its own, after the one that found the object: a concurrent
    // request may have removed it for good in between (a purge, a deleted comment). That object
    // is gone, so the answer is the usual not-found error, not a server error.
    return ids.map((id) => {
      const json = jsons.get(id);
      return json === undefined ? AppError.notFound(`${kind} not found`) : entityTag(json);
    });
  });
}

export const postEtag = (ctx: RequestContext, id: number) => etagLoader(ctx, 'Post', (ids) => postJsons(ctx, ids)).load(id);
export const commentEtag = (ctx: RequestContext, id: number) => etagLoader(ctx, 'Comment', (ids) => commentJsons(ctx.em, ids)).load(id);
export const userEtag = (ctx: RequestContext, id: number) => etagLoader(ctx, 'User', (ids) => userJsons(ctx, ids)).load(id);
