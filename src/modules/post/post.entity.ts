import { defineEntity, p } from '@mikro-orm/core';
import { baseProperties } from '../../core/base.entity';
import { User } from '../user/user.entity';

export const PostSchema = defineEntity({
  name: 'Post',
  tableName: 'posts',
  properties: {
    ...baseProperties,
    /**
     * `filters` stops MikroORM from auto-joining users to apply their softDelete filter to every
     * post query (autoJoinRefsForFilters): a soft-deleted author hides nothing, the post shows
     * `user: null` instead, and post lists stay single-table scans.
     */
    user: () => p.manyToOne(User).deleteRule('cascade').updateRule('cascade').fieldName('user_id').index('posts_user_id_index').filters({ softDelete: false }),
    title: p.string().length(255),
    slug: p.string().length(255).unique('posts_slug_unique'),
    body: p.text(),
    published: p.boolean().default(false),
    publishedAt: p.datetime().strictNullable(),
    deletedAt: p.datetime().strictNullable(),
  },
  filters: { softDelete: { name: 'softDelete', cond: { deletedAt: null }, default: true } },
  indexes: [
    // The list orders: GET /posts (created_at desc, id desc) and GET /trash (deleted_at desc, id desc).
    { name: 'posts_live_created_at_id_index', expression: 'create index "posts_live_created_at_id_index" on "posts" ("created_at", "id") where "deleted_at" is null' },
    { name: 'posts_deleted_at_id_index', properties: ['deletedAt', 'id'] },
  ],
});

export class Post extends PostSchema.class {
  get isTrashed(): boolean {
    return this.deletedAt !== null;
  }
}
PostSchema.setClass(Post);
