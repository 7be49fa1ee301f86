import { Arg, Ctx, FieldResolver, Int, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import type { RequestContext } from '../../core/context';
import { buildListRequest, type ListResult } from '../../core/pagination';
import { liveHub, topics } from '../../graphql/live';
import { DirectionEnum, MessageType } from '../../graphql/pagination.types';
import type { Services } from '../services';
import { CommentType, type CommentView } from '../comment/comment.types';
import { UserType, type UserView } from '../user/user.types';
import { AuthorType, type AuthorView } from './author.types';
import { authorLoader, commentsLoader, postsByUserLoader } from './post.loaders';
import { findPostView } from './post.queries';
import { PostCursorPage, PostPage, PostSimplePage, PostType, presentPost, type PostView } from './post.types';

const GRAPHQL_PATH = '/graphql';

@Resolver(() => PostType)
export class PostResolver {
  constructor(private readonly services: Services) {}

  private async list(ctx: RequestContext, kind: 'page' | 'simple' | 'cursor', args: object, filters: object): Promise<ListResult<PostView>> {
    return this.services.posts.list(ctx, filters, () => buildListRequest(kind, args), GRAPHQL_PATH);
  }

  @Query(() => PostPage)
  posts(
    @Ctx() ctx: RequestContext,
    @Arg('page', () => Int, { nullable: true }) page?: number,
    @Arg('published', () => Boolean, { nullable: true }) published?: boolean,
    @Arg('author', () => Int, { nullable: true }) author?: number,
  ) {
    return this.list(ctx, 'page', { page }, { published, author });
  }

  @Query(() => PostSimplePage)
  postsSimple(
    @Ctx() ctx: RequestContext,
    @Arg('page', () => Int, { nullable: true }) page?: number,
    @Arg('published', () => Boolean, { nullable: true }) published?: boolean,
    @Arg('author', () => Int, { nullable: true }) author?: number,
  ) {
    return this.list(ctx, 'simple', { page }, { published, author });
  }

  @Query(() => PostCursorPage)
  postsCursor(
    @Ctx() ctx: RequestContext,
    @Arg('cursor', () => String, { nullable: true }) cursor?: string,
    @Arg('direction', () => DirectionEnum, { nullable: true }) direction?: DirectionEnum,
    @Arg('published', () => Boolean, { nullable: true }) published?: boolean,
    @Arg('author', () => Int, { nullable: true }) author?: number,
  ) {
    return this.list(ctx, 'cursor', { cursor, direction }, { published, author });
  }

  @Query(() => PostType)
  async post(@Ctx() ctx: RequestContext, @Arg('id', () => Int) id: number): Promise<PostView> {
    return this.services.posts.get(ctx, id);
  }

  @Mutation(() => PostType)
  async createPost(
    @Ctx() ctx: RequestContext,
    @Arg('title', () => String) title: string,
    @Arg('body', () => String) body: string,
  ): Promise<PostView> {
    return presentPost(await this.services.posts.create(ctx, { title, body }));
  }

  @Mutation(() => PostType)
  async publishPost(@Ctx() ctx: RequestContext, @Arg('id', () => Int) id: number): Promise<PostView> {
    return presentPost(await this.services.posts.publish(ctx, id));
  }

  @Mutation(() => MessageType)
  deletePost(@Ctx() ctx: RequestContext, @Arg('id', () => Int) id: number) {
    return this.services.posts.remove(ctx, id);
  }

  @Mutation(() => PostType)
  async restorePost(@Ctx() ctx: RequestContext, @Arg('id', () => Int) id: number): Promise<PostView> {
    return presentPost(await this.services.posts.restore(ctx, id));
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

  @FieldResolver(() => AuthorType, { nullable: true, description: 'null when the author is soft-deleted' })
  user(@Root() post: PostView, @Ctx() ctx: RequestContext): Promise<AuthorView | null> {
    return authorLoader(ctx).load(post.userId);
  }

  @FieldResolver(() => [CommentType], { description: 'Oldest first' })
  comments(@Root() post: PostView, @Ctx() ctx: RequestContext): Promise<CommentView[]> {
    return commentsLoader(ctx).load(post.id);
  }

  @FieldResolver(() => Int)
  async commentsCount(@Root() post: PostView, @Ctx() ctx: RequestContext): Promise<number> {
    return (await commentsLoader(ctx).load(post.id)).length;
  }
}

/** User.posts: the user's active posts, newest first, batched per request. */
@Resolver(() => UserType)
export class UserPostsResolver {
  @FieldResolver(() => [PostType])
  posts(@Root() user: UserView, @Ctx() ctx: RequestContext): Promise<PostView[]> {
    return postsByUserLoader(ctx).load(user.id);
  }
}
