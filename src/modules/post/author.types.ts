import { Field, Int, ObjectType } from 'type-graphql';
import type { User } from '../user/user.entity';

/** The `user` embedded in posts and comments: public, so id and name only (never the email). */
export interface AuthorView {
  id: number;
  name: string;
}

export function presentAuthor(u: User): AuthorView {
  return { id: u.id, name: u.name };
}

@ObjectType('Author', { simpleResolvers: true })
export class AuthorType implements AuthorView {
  @Field(() => Int) id!: number;
  @Field(() => String) name!: string;
}
