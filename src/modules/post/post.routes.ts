import { listRequestFromQuery } from '../../core/pagination';
import { reply, replyJson, type RouteDef } from '../../http/routes';
import { jsonListText } from '../../http/present';
import type { Services } from '../services';
import { keyedCreate } from '../idempotency/idempotency.rest';
import { postJson, postJsonSource, writtenCommentJson, writtenPostJson } from './post.rest';

export function postRoutes({ posts, comments, idempotency }: Services): RouteDef[] {
  return [
    {
      method: 'get',
      path: '/posts',
      staleReadsOk: true,
      publicRead: true,
      handler: async (req, ctx) => replyJson(jsonListText(await posts.list(ctx, req.query, () => listRequestFromQuery(req.query), req.path, postJsonSource))),
    },
    {
      method: 'post',
      path: '/posts',
      handler: (req, ctx) => keyedCreate(idempotency, ctx, req, (c) => posts.create(c, req.body, async (tx, post) => ({ json: await writtenPostJson(tx, post), id: post.id }))),
    },
    {
      method: 'get',
      path: '/posts/:id',
      staleReadsOk: true,
      publicRead: true,
      handler: async (req, ctx) => replyJson(await posts.get(ctx, req.params.id, postJson)),
    },
    {
      method: 'patch',
      path: '/posts/:id/publish',
      handler: async (req, ctx) => replyJson(await posts.publish(ctx, req.params.id, writtenPostJson)),
    },
    {
      method: 'delete',
      path: '/posts/:id',
      handler: async (req, ctx) => reply(await posts.remove(ctx, req.params.id)),
    },
    {
      method: 'patch',
      path: '/posts/:id/restore',
      handler: async (req, ctx) => replyJson(await posts.restore(ctx, req.params.id, writtenPostJson)),
    },
    {
      method: 'post',
      path: '/posts/:id/comments',
      handler: (req, ctx) =>
        keyedCreate(idempotency, ctx, req, (c) => comments.add(c, req.params.id, req.body, async (tx, comment) => ({ json: await writtenCommentJson(tx, comment), id: comment.id }))),
    },
  ];
}
