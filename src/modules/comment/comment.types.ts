import { Field, Int, ObjectType } from 'type-graphql';
import type { Comment } from './comment.entity';

/** A comment without its embeds; `user` is added by a field resolver (GraphQL). */
export interface CommentView {
  id: number;
  postId: number;
  userId: number;
  body: string;
  createdAt: Date;
  updatedAt: Date;
}

export function presentComment(c: Comment): CommentView {
  return { id: c.id, postId: c.post.id, userId: c.user.id, body: c.body, createdAt: c.createdAt, updatedAt: c.updatedAt };
}

@ObjectType('Comment', { simpleResolvers: true })
export class CommentType implements CommentView {
  @Field(() => Int) id!: number;
  @Field(() => Int) postId!: number;
  @Field(() => Int) userId!: number;
  @Field(() => String) body!: string;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}
