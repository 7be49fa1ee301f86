import { Field, Int, ObjectType } from 'type-graphql';
import { CursorPageOf, PageOf, SimplePageOf } from '../../graphql/pagination.types';
import type { Post } from './post.entity';

/** A post without its embeds (author, comments, count); embeds come from the loaders in post.loaders.ts. */
export interface PostView {
  id: number;
  userId: number;
  title: string;
  slug: string;
  body: string;
  published: boolean;
  publishedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
}

export function presentPost(p: Post): PostView {
  return {
    id: p.id,
    userId: p.user.id,
    title: p.title,
    slug: p.slug,
    body: p.body,
    published: p.published,
    publishedAt: p.publishedAt,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
    deletedAt: p.deletedAt,
  };
}

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
