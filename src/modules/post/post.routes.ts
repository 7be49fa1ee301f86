import { listRequestFromQuery } from '../../core/pagination';
import { reply, replyJson, type RouteDef } from '../../http/routes';
import { jsonListText, snake } from '../../http/present';
import type { Services } from '../services';
import { presentComment } from '../comment/comment.types';
import { fullComment, fullPost } from './post.loaders';
import { presentPost, type PostView } from './post.types';
import { Post } from './post.entity';
import type { RequestContext } from '../../core/context';

/** A post as REST shows it everywhere: with author, comments and their count, snake_cased. */
export async function postJson(ctx: RequestContext, post: Post | PostView): Promise<unknown> {
  return snake(await fullPost(ctx, post instanceof Post ? presentPost(post) : post));
}

export function postRoutes({ posts, comments }: Services): RouteDef[] {
  return [
    {
      method: 'get',
      path: '/posts',
      staleReadsOk: true,
      publicRead: true,
      handler: async (req, ctx) => replyJson(jsonListText(await posts.list(ctx, req.query, () => listRequestFromQuery(req.query), req.path, 'json'))),
    },
    {
      method: 'post',
      path: '/posts',
      handler: async (req, ctx) => reply(await postJson(ctx, await posts.create(ctx, req.body)), 201),
    },
    {
      method: 'get',
      path: '/posts/:id',
      staleReadsOk: true,
      publicRead: true,
      handler: async (req, ctx) => replyJson((await posts.get(ctx, req.params.id, 'json')).json),
    },
    {
      method: 'patch',
      path: '/posts/:id/publish',
      handler: async (req, ctx) => reply(await postJson(ctx, await posts.publish(ctx, req.params.id))),
    },
    {
      method: 'delete',
      path: '/posts/:id',
      handler: async (req, ctx) => reply(await posts.remove(ctx, req.params.id)),
    },
    {
      method: 'patch',
      path: '/posts/:id/restore',
      handler: async (req, ctx) => reply(await postJson(ctx, await posts.restore(ctx, req.params.id))),
    },
    {
      method: 'post',
      path: '/posts/:id/comments',
      handler: async (req, ctx) => {
        const comment = await comments.add(ctx, req.params.id, req.body);
        return reply(snake(await fullComment(ctx, presentComment(comment))), 201);
      },
    },
  ];
}
