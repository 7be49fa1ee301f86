import { listRequestFromQuery } from '../../core/pagination';
import { contextOf, type RouteDef } from '../../http/routes';
import { sendJson, sendJsonList, snake } from '../../http/present';
import type { Services } from '../services';
import { presentComment } from '../comment/comment.types';
import { fullComment, fullPost } from './post.loaders';
import { presentPost, type PostView } from './post.types';
import { Post } from './post.entity';
import type { RequestContext } from '../../core/context';

/** A post as REST shows it everywhere (CONTRACT 4): with author, comments and their count, snake_cased. */
export async function postJson(ctx: RequestContext, post: Post | PostView): Promise<unknown> {
  return snake(await fullPost(ctx, post instanceof Post ? presentPost(post) : post));
}

export function postRoutes({ posts, comments }: Services): RouteDef[] {
  return [
    {
      method: 'get',
      path: '/posts',
      staleReadsOk: true,
      handler: async (req, res) => {
        const ctx = contextOf(res);
        sendJsonList(res, await posts.list(ctx, req.query, () => listRequestFromQuery(req.query), req.path, 'json'));
      },
    },
    {
      method: 'post',
      path: '/posts',
      handler: async (req, res) => {
        const ctx = contextOf(res);
        res.status(201).json(await postJson(ctx, await posts.create(ctx, req.body)));
      },
    },
    {
      method: 'get',
      path: '/posts/:id',
      staleReadsOk: true,
      handler: async (req, res) => {
        sendJson(res, await posts.get(contextOf(res), req.params.id, 'json'));
      },
    },
    {
      method: 'patch',
      path: '/posts/:id/publish',
      handler: async (req, res) => {
        const ctx = contextOf(res);
        res.json(await postJson(ctx, await posts.publish(ctx, req.params.id)));
      },
    },
    {
      method: 'delete',
      path: '/posts/:id',
      handler: async (req, res) => {
        res.json(await posts.remove(contextOf(res), req.params.id));
      },
    },
    {
      method: 'patch',
      path: '/posts/:id/restore',
      handler: async (req, res) => {
        const ctx = contextOf(res);
        res.json(await postJson(ctx, await posts.restore(ctx, req.params.id)));
      },
    },
    {
      method: 'post',
      path: '/posts/:id/comments',
      handler: async (req, res) => {
        const ctx = contextOf(res);
        const comment = await comments.add(ctx, req.params.id, req.body);
        res.status(201).json(snake(await fullComment(ctx, presentComment(comment))));
      },
    },
  ];
}
