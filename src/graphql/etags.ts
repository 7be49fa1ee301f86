import type { RequestContext } from '../core/context';
import { entityTag } from '../core/etag';
import { loader } from '../core/loaders';
import { commentJsons, postJsons } from '../modules/post/post.rest';
import { userJsons } from '../modules/user/user.rest';

/** The descriptions of every `etag` field and `ifMatch` argument. */
export const ETAG = "The strong ETag of this object's REST answer (the same tag REST sends): pass it as `ifMatch` to write only this version.";
export const IF_MATCH = 'Write only if the current `etag` is one of these (a list as in If-Match; `*` for any): else PRECONDITION_FAILED with the current tag in extensions.etag.';

/**
 * GraphQL's `etag` fields: the tag of the object's REST answer, built by the same builder the
 * REST routes answer with (each module's *.rest.ts) and hashed by the same function (core/etag.ts),
 * so a tag read on one surface is a valid If-Match / `ifMatch` on the other. One statement per
 * kind for a whole list (a DataLoader per request); cleared with the other loaders after a write.
 */
function etagLoader(ctx: RequestContext, kind: string, read: (ids: readonly number[]) => Promise<Map<number, string>>) {
  return loader<number, string>(ctx, `etag:${kind}`, async (ids) => {
    const jsons = await read(ids);
    return ids.map((id) => {
      const json = jsons.get(id);
      return json === undefined ? new Error(`${kind} ${id} has no answer to tag`) : entityTag(json);
    });
  });
}

export const postEtag = (ctx: RequestContext, id: number) => etagLoader(ctx, 'post', (ids) => postJsons(ctx, ids)).load(id);
export const commentEtag = (ctx: RequestContext, id: number) => etagLoader(ctx, 'comment', (ids) => commentJsons(ctx.em, ids)).load(id);
export const userEtag = (ctx: RequestContext, id: number) => etagLoader(ctx, 'user', (ids) => userJsons(ctx, ids)).load(id);
