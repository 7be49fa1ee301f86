import { listRequestFromQuery } from '../../core/pagination';
import { preconditionOf, reply, replyJson, replyTagged, type RouteDef } from '../../http/routes';
import { jsonListText } from '../../http/present';
import type { Services } from '../services';
import { keyedCreate } from '../idempotency/idempotency.rest';
import { commentJsonStatement } from '../comment/comment.repository';
import { postJson, postJsonSource, postJsonStatement, writtenPostJson } from './post.repository';

export function postRoutes({ posts, comments, idempotency, deps }: Services): RouteDef[] {
  const required = deps.config.requireIfMatch;
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
      handler: (req, ctx) => keyedCreate(idempotency, ctx, req, (c, read) => posts.create(c, req.body, async (tx, post) => read(tx, await postJsonStatement(tx, post.id), post.id)), { tagged: true }),
    },
    {
      method: 'get',
      path: '/posts/:id',
      staleReadsOk: true,
      publicRead: true,
      handler: async (req, ctx) => replyTagged(await posts.get(ctx, req.params.id, postJson)),
    },
    {
      method: 'patch',
      path: '/posts/:id',
      handler: async (req, ctx) => replyTagged(await posts.update(ctx, req.params.id, req.body, preconditionOf(req, required), writtenPostJson)),
    },
    {
      method: 'patch',
      path: '/posts/:id/publish',
      handler: async (req, ctx) => replyTagged(await posts.publish(ctx, req.params.id, preconditionOf(req, required), writtenPostJson)),
    },
    {
      method: 'delete',
      path: '/posts/:id',
      handler: async (req, ctx) => reply(await posts.remove(ctx, req.params.id, preconditionOf(req, required))),
    },
    {
      method: 'patch',
      path: '/posts/:id/restore',
      handler: async (req, ctx) => replyTagged(await posts.restore(ctx, req.params.id, preconditionOf(req, required), writtenPostJson)),
    },
    {
      method: 'post',
      path: '/posts/:id/comments',
      handler: (req, ctx) =>
        keyedCreate(idempotency, ctx, req, (c, read) => comments.add(c, req.params.id, req.body, async (tx, comment) => read(tx, await commentJsonStatement(tx, [comment.id]), comment.id)), { tagged: true }),
    },
  ];
}
