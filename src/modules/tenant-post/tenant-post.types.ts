import { Field, Int, ObjectType } from 'type-graphql';
import { shapeOf, type ViewOf } from '../../core/shape';
import { TenantPostSchema, type TenantPost } from './tenant-post.entity';

/**
 * A tenant post as it leaves the service: the reads' select list, row and view
 * (tenant-post.service.ts) and the REST JSON's keys (tenant-post.rest.ts) follow from this list
 * and the entity (core/shape.ts).
 */
export const tenantPostShape = shapeOf(TenantPostSchema, ['id', 'tenantId', 'title', 'body', 'createdAt', 'updatedAt']);

export type TenantPostView = ViewOf<typeof tenantPostShape>;

export const presentTenantPost = (p: TenantPost): TenantPostView => tenantPostShape.present(p);

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
