import { defineEntity, p } from '@mikro-orm/core';
import { baseProperties } from '../../core/base.entity';
import { Post } from '../post/post.entity';
import { User } from '../user/user.entity';

export const CommentSchema = defineEntity({
  name: 'Comment',
  tableName: 'comments',
  properties: {
    ...baseProperties,
    /** Comments are read by post id; a trashed post's comments stay readable in the trash. */
    post: () => p.manyToOne(Post).deleteRule('cascade').updateRule('cascade').fieldName('post_id').index(false).filters({ softDelete: false }),
    /** As Post.user: a soft-deleted author keeps the comment visible, with `user: null`. */
    user: () => p.manyToOne(User).deleteRule('cascade').updateRule('cascade').fieldName('user_id').index('comments_user_id_index').filters({ softDelete: false }),
    body: p.text(),
  },
  // Comments are read per post, oldest first.
  indexes: [{ name: 'comments_post_id_created_at_id_index', properties: ['post', 'createdAt', 'id'] }],
});

export class Comment extends CommentSchema.class {}
CommentSchema.setClass(Comment);
