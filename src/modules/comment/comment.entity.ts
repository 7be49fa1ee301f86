import type { Rel } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from '../../core/base.entity';
import { Post } from '../post/post.entity';
import { User } from '../user/user.entity';

@Entity({ tableName: 'comments' })
// Comments are read per post, oldest first.
@Index({ name: 'comments_post_id_created_at_id_index', properties: ['post', 'createdAt', 'id'] })
export class Comment extends BaseEntity {
  /** Comments are read by post id; a trashed post's comments stay readable in the trash. */
  @ManyToOne(() => Post, { deleteRule: 'cascade', updateRule: 'cascade', fieldName: 'post_id', index: false, filters: { softDelete: false } })
  post!: Rel<Post>;

  /** As Post.user: a soft-deleted author keeps the comment visible, with `user: null`. */
  @ManyToOne(() => User, { deleteRule: 'cascade', updateRule: 'cascade', fieldName: 'user_id', index: 'comments_user_id_index', filters: { softDelete: false } })
  user!: Rel<User>;

  @Property({ type: 'text' })
  body!: string;
}
