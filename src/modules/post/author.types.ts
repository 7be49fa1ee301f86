import { Field, Int, ObjectType } from 'type-graphql';

/** The `user` embedded in posts and comments: public, so id and name only (never the email). */
export interface AuthorView {
  id: number;
  name: string;
}

@ObjectType('Author', { simpleResolvers: true })
export class AuthorType implements AuthorView {
  @Field(() => Int) id!: number;
  @Field(() => String) name!: string;
}
