import { Field, Int, ObjectType } from 'type-graphql';
import { CursorPageOf, PageOf, SimplePageOf } from '../../graphql/pagination.types';
import type { PostView } from './post.types';

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
