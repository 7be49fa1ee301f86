import { preconditionOf, reply, replyTagged, type RouteDef } from '../../http/routes';
import { writtenCommentJson } from './comment.repository';
import type { Services } from '../services';

export function commentRoutes({ comments, deps }: Services): RouteDef[] {
  const required = deps.config.requireIfMatch;
  return [
    {
      method: 'patch',
      path: '/comments/:id',
      handler: async (req, ctx) => replyTagged(await comments.update(ctx, req.params.id, req.body, preconditionOf(req, required), writtenCommentJson)),
    },
    {
      method: 'delete',
      path: '/comments/:id',
      handler: async (req, ctx) => reply(await comments.remove(ctx, req.params.id, preconditionOf(req, required))),
    },
  ];
}
