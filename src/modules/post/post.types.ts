import { Field, Int, ObjectType } from 'type-graphql';
import { shapeOf, type RowOf, type ViewOf } from '../../core/shape';
import { CursorPageOf, PageOf, SimplePageOf } from '../../graphql/pagination.types';
import { PostSchema, type Post } from './post.entity';

/**
 * A post as it leaves the service, without its embeds (author, comments, count; post.loaders.ts):
 * the read model's select list, row and view (post.queries.ts) and the REST JSON's own keys
 * (post.rest.ts) all follow from this list and the entity (core/shape.ts).
 */
export const postShape = shapeOf(PostSchema, ['id', 'user', 'title', 'slug', 'body', 'published', 'publishedAt', 'createdAt', 'updatedAt', 'deletedAt']);

export type PostView = ViewOf<typeof postShape>;
/** A row of postShape's select list (timestamps as text). */
export type PostColumns = RowOf<typeof postShape>;

export const presentPost = (p: Post): PostView => postShape.present(p);

/** GraphQL's Post: written in type-graphql's idiom; test/shapes.test.ts holds its fields to postShape. */
@ObjectType('Post', { simpleResolvers: true })
export class PostType implements PostView {
  @Field(() => Int) id!: number;
  @Field(() => Int) userId!: number;
  @Field(() => String) title!: string;
  @Field(() => String) slug!: string;
  @Field(() => String) body!: string;
  @Field(() => Boolean) published!: boolean;
  @Field(() => Date, { nullable: true }) publishedAt!: Date | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
  @Field(() => Date, { nullable: true }) deletedAt!: Date | null;
}

export const PostPage = PageOf(PostType, 'PostPage');
export const PostSimplePage = SimplePageOf(PostType, 'PostSimplePage');
export const PostCursorPage = CursorPageOf(PostType, 'PostCursorPage');

@ObjectType('PurgeResult', { simpleResolvers: true })
export class PurgeResultType {
  @Field(() => String) message!: string;
  @Field(() => Int) count!: number;
}
