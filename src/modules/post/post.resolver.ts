import type { GraphQLResolveInfo } from 'graphql';
import { Arg, Ctx, FieldResolver, Info, Int, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import type { RequestContext } from '../../core/context';
import { buildListRequest, type ListResult } from '../../core/pagination';
import { liveHub, topics } from '../../graphql/live';
import { DirectionEnum, MessageType } from '../../graphql/pagination.types';
import type { Services } from '../services';
import { IDEMPOTENCY_KEY_ARG } from '../idempotency/idempotency.types';
import { CommentType } from '../comment/comment.graphql';
import type { CommentView } from '../comment/comment.types';
import { AuthorType, UserType } from '../user/user.graphql';
import type { AuthorView, UserView } from '../user/user.types';
import { selects } from '../../graphql/selection';
import type { DirectResolvers } from '../../graphql/direct-resolvers';
import { ETAG, IF_MATCH, postEtag } from '../../graphql/etags';
import { precondition } from '../../core/etag';
import { authorLoader, commentsLoader, findPostView, knownAuthor, knownComments, postsByUserLoader, postViewSource, preloadComments } from './post.loaders';
import type { Post } from './post.entity';
import { PostCursorPage, PostPage, PostSimplePage, PostType } from './post.graphql';
import { presentPost, type PostView } from './post.types';

const GRAPHQL_PATH = '/graphql';

/** A written post as GraphQL answers it (core/row-lock.ts ReadBack): the entity as the write left it, presented. */
export const asView = (_tx: unknown, post: Post): PostView => presentPost(post);

@Resolver(() => PostType)
export class PostResolver {
  constructor(private readonly services: Services) {}

  private async list(ctx: RequestContext, info: GraphQLResolveInfo, kind: 'page' | 'simple' | 'cursor', args: object, filters: object): Promise<ListResult<PostView>> {
    const list = await this.services.posts.list(ctx, filters, () => buildListRequest(kind, args), GRAPHQL_PATH, postViewSource);
    await withComments(ctx, info, ['data'], list.data);
    return list;
  }

  @Query(() => PostPage)
  posts(
    @Ctx() ctx: RequestContext,
    @Info() info: GraphQLResolveInfo,
    @Arg('page', () => Int, { nullable: true }) page?: number,
    @Arg('published', () => Boolean, { nullable: true }) published?: boolean,
    @Arg('author', () => Int, { nullable: true }) author?: number,
  ) {
    return this.list(ctx, info, 'page', { page }, { published, author });
  }

  @Query(() => PostSimplePage)
  postsSimple(
    @Ctx() ctx: RequestContext,
    @Info() info: GraphQLResolveInfo,
    @Arg('page', () => Int, { nullable: true }) page?: number,
    @Arg('published', () => Boolean, { nullable: true }) published?: boolean,
    @Arg('author', () => Int, { nullable: true }) author?: number,
  ) {
    return this.list(ctx, info, 'simple', { page }, { published, author });
  }

  @Query(() => PostCursorPage)
  postsCursor(
    @Ctx() ctx: RequestContext,
    @Info() info: GraphQLResolveInfo,
    @Arg('cursor', () => String, { nullable: true }) cursor?: string,
    @Arg('direction', () => DirectionEnum, { nullable: true }) direction?: DirectionEnum,
    @Arg('published', () => Boolean, { nullable: true }) published?: boolean,
    @Arg('author', () => Int, { nullable: true }) author?: number,
  ) {
    return this.list(ctx, info, 'cursor', { cursor, direction }, { published, author });
  }

  // Nullable: a missing post is null with its NOT_FOUND error at `post`, and sibling fields keep their data.
  @Query(() => PostType, { nullable: true, description: 'One post with its author and comments; null (with a NOT_FOUND error) when missing or trashed.' })
  async post(@Ctx() ctx: RequestContext, @Info() info: GraphQLResolveInfo, @Arg('id', () => Int) id: number): Promise<PostView | null> {
    const post = await this.services.posts.get(ctx, id, findPostView);
    await withComments(ctx, info, [], [post]);
    return post;
  }

  @Mutation(() => PostType)
  async createPost(
    @Ctx() ctx: RequestContext,
    @Arg('title', () => String) title: string,
    @Arg('body', () => String) body: string,
    @Arg('idempotencyKey', () => String, { nullable: true, description: IDEMPOTENCY_KEY_ARG }) idempotencyKey?: string | null,
  ): Promise<PostView> {
    const { posts, idempotency } = this.services;
    const request = await idempotency.prepare(ctx, { key: idempotencyKey, field: 'idempotencyKey', method: 'GRAPHQL', path: 'createPost', body: { title, body } });
    const out = await idempotency.run(ctx, request, async (c) => {
      const post = await posts.create(c, { title, body }, asView);
      return { status: 200, body: null, resourceId: post.id, value: post };
    });
    return out.replayed ? posts.get(ctx, out.resourceId, findPostView) : out.value;
  }

  /** `ifMatch` as REST's If-Match; REQUIRE_IF_MATCH applies here too. */
  private pre(ifMatch: string | null | undefined) {
    return precondition(this.services.deps.config.requireIfMatch, ifMatch);
  }

  @Mutation(() => PostType, { description: 'Edits the title and/or body (at least one); the slug does not change.' })
  async updatePost(
    @Ctx() ctx: RequestContext,
    @Arg('id', () => Int) id: number,
    @Arg('title', () => String, { nullable: true }) title?: string,
    @Arg('body', () => String, { nullable: true }) body?: string,
    @Arg('ifMatch', () => String, { nullable: true, description: IF_MATCH }) ifMatch?: string,
  ): Promise<PostView> {
    return this.services.posts.update(ctx, id, { title: title ?? undefined, body: body ?? undefined }, this.pre(ifMatch), asView);
  }

  @Mutation(() => PostType)
  async publishPost(
    @Ctx() ctx: RequestContext,
    @Arg('id', () => Int) id: number,
    @Arg('ifMatch', () => String, { nullable: true, description: IF_MATCH }) ifMatch?: string,
  ): Promise<PostView> {
    return this.services.posts.publish(ctx, id, this.pre(ifMatch), asView);
  }

  @Mutation(() => MessageType)
  deletePost(
    @Ctx() ctx: RequestContext,
    @Arg('id', () => Int) id: number,
    @Arg('ifMatch', () => String, { nullable: true, description: IF_MATCH }) ifMatch?: string,
  ) {
    return this.services.posts.remove(ctx, id, this.pre(ifMatch));
  }

  @Mutation(() => PostType)
  async restorePost(
    @Ctx() ctx: RequestContext,
    @Arg('id', () => Int) id: number,
    @Arg('ifMatch', () => String, { nullable: true, description: IF_MATCH }) ifMatch?: string,
  ): Promise<PostView> {
    return this.services.posts.restore(ctx, id, this.pre(ifMatch), asView);
  }

  @Subscription(() => PostType, {
    description: 'A post became published (route or mutation); delivered as `post(id)` would answer it.',
    subscribe: ({ context }) =>
      liveHub(context).subscribe({
        topic: topics.postPublished(),
        field: 'postPublished',
        tenantId: null,
        load: (ctx, e) => (e.type === 'postPublished' ? findPostView(ctx, e.postId) : Promise.resolve(null)),
      }),
  })
  postPublished(@Root() post: PostView): PostView {
    return post;
  }

  // user, comments and commentsCount run as postEmbeds (below): these declare the fields.
  @FieldResolver(() => AuthorType, { nullable: true, description: 'null when the author is soft-deleted' })
  user(@Root() post: PostView, @Ctx() ctx: RequestContext): AuthorView | null | Promise<AuthorView | null> {
    return postEmbeds.user(post, {}, ctx);
  }

  @FieldResolver(() => [CommentType], { description: 'Oldest first' })
  comments(@Root() post: PostView, @Ctx() ctx: RequestContext): CommentView[] | Promise<CommentView[]> {
    return postEmbeds.comments(post, {}, ctx);
  }

  @FieldResolver(() => String, { description: ETAG })
  etag(@Root() post: PostView, @Ctx() ctx: RequestContext): Promise<string> {
    return postEtag(ctx, post.id);
  }

  @FieldResolver(() => Int)
  commentsCount(@Root() post: PostView, @Ctx() ctx: RequestContext): number | Promise<number> {
    return postEmbeds.commentsCount(post, {}, ctx);
  }
}

/**
 * A post's embeds as graphql-js calls them (graphql/schema.ts installs them over the declarations
 * above): a page asks for them about 140 times (20 posts, 100 comments' authors), and
 * type-graphql's per-call wrapper (its resolver data, the sorted parameters) was a sixth of the
 * page's allocation. Answered from what the list read ahead when it did (no promise), batched
 * per request otherwise.
 */
export const postEmbeds = {
  user(post: PostView, _args: object, ctx: RequestContext): AuthorView | null | Promise<AuthorView | null> {
    const known = knownAuthor(post);
    return known !== undefined ? known : authorLoader(ctx).load(post.userId);
  },
  comments(post: PostView, _args: object, ctx: RequestContext): CommentView[] | Promise<CommentView[]> {
    return knownComments(post) ?? commentsLoader(ctx).load(post.id);
  },
  commentsCount(post: PostView, _args: object, ctx: RequestContext): number | Promise<number> {
    const known = knownComments(post);
    return known ? known.length : commentsLoader(ctx).load(post.id).then((c) => c.length);
  },
} satisfies DirectResolvers<PostView>;

/** User.posts: the user's active posts, newest first, batched per request. */
@Resolver(() => UserType)
export class UserPostsResolver {
  @FieldResolver(() => [PostType])
  posts(@Root() user: UserView, @Ctx() ctx: RequestContext): Promise<PostView[]> {
    return postsByUserLoader(ctx).load(user.id);
  }
}

/** When the query asks for comments below `path`, reads them for every post of the list in one batch. */
export async function withComments(ctx: RequestContext, info: GraphQLResolveInfo, path: string[], posts: PostView[]): Promise<void> {
  if (selects(info, path, ['comments', 'commentsCount'])) await preloadComments(ctx, posts);
}
