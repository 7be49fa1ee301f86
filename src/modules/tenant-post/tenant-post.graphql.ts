import { Field, Int, ObjectType } from 'type-graphql';
import type { TenantPostView } from './tenant-post.types';

/** GraphQL's TenantPost: written in type-graphql's idiom; test/shapes.test.ts holds its fields to tenantPostShape. */
@ObjectType('TenantPost', { simpleResolvers: true })
export class TenantPostType implements TenantPostView {
  @Field(() => Int) id!: number;
  @Field(() => Int) tenantId!: number;
  @Field(() => String) title!: string;
  @Field(() => String) body!: string;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}
