import type { Rel } from '@mikro-orm/core';
import { Entity, Filter, Index, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from '../../core/base.entity';
import { User } from '../user/user.entity';

@Entity({ tableName: 'posts' })
@Filter({ name: 'softDelete', cond: { deletedAt: null }, default: true })
// The list orders: GET /posts (created_at desc, id desc) and GET /trash (deleted_at desc, id desc).
@Index({ name: 'posts_live_created_at_id_index', expression: 'create index "posts_live_created_at_id_index" on "posts" ("created_at", "id") where "deleted_at" is null' })
@Index({ name: 'posts_deleted_at_id_index', properties: ['deletedAt', 'id'] })
export class Post extends BaseEntity {
  /**
   * `filters` stops MikroORM from auto-joining users to apply their softDelete filter to every
   * post query (autoJoinRefsForFilters): a soft-deleted author hides nothing, the post shows
   * `user: null` instead, and post lists stay single-table scans.
   */
  @ManyToOne(() => User, { deleteRule: 'cascade', updateRule: 'cascade', fieldName: 'user_id', index: 'posts_user_id_index', filters: { softDelete: false } })
  user!: Rel<User>;

  @Property({ type: 'string', length: 255 })
  title!: string;

  @Property({ type: 'string', length: 255 })
  @Unique({ name: 'posts_slug_unique' })
  slug!: string;

  @Property({ type: 'text' })
  body!: string;

  @Property({ type: 'boolean', default: false })
  published: boolean = false;

  @Property({ type: 'datetime', nullable: true })
  publishedAt: Date | null = null;

  @Property({ type: 'datetime', nullable: true })
  deletedAt: Date | null = null;

  get isTrashed(): boolean {
    return this.deletedAt !== null;
  }
}
