import { Field, Int, ObjectType } from 'type-graphql';
import type { TenantPost } from './tenant-post.entity';

/** What leaves the service about a tenant post; REST sends it snake_cased. */
export interface TenantPostView {
  id: number;
  tenantId: number;
  title: string;
  body: string;
  createdAt: Date;
  updatedAt: Date;
}

export function presentTenantPost(p: TenantPost): TenantPostView {
  return { id: p.id, tenantId: p.tenantId, title: p.title, body: p.body, createdAt: p.createdAt, updatedAt: p.updatedAt };
}

@ObjectType('TenantPost', { simpleResolvers: true })
export class TenantPostType implements TenantPostView {
  @Field(() => Int) id!: number;
  @Field(() => Int) tenantId!: number;
  @Field(() => String) title!: string;
  @Field(() => String) body!: string;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}
