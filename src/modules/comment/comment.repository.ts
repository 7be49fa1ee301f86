import { raw, type EntityManager } from '@mikro-orm/postgresql';
import { entityTag } from '../../core/etag';
import { jsonAggSql, jsonKeysOf, jsonObjectSql, written } from '../../db/json-sql';
import { cachedStatement, param, runStatement, statementOf, type Statement } from '../../db/statements';
import { authorJsonSql, leftJoinAuthor } from '../user/user.repository';
import { Comment } from './comment.entity';
import { commentShape, type CommentColumns } from './comment.types';

/** The comments' statements: a page's batch, a comment's REST answer (also in its post's). Their SQL: comment.repository.sql. */

/** A comment row: commentShape's columns and its author's name (null when the author was filtered out). */
export type CommentRow = CommentColumns & { author_name: string | null };

/**
 * The comments of `postIds`, oldest first, with their authors (leftJoinAuthor: a soft-deleted
 * author's name is null), as plain rows: building ~100 entities per page was most of the CPU of
 * GET /posts (npm run bench). One shape per batch size: the post ids are declared parameters.
 */
export async function commentsOfPosts(em: EntityManager, postIds: readonly number[], stale: boolean): Promise<CommentRow[]> {
  const statement = await cachedStatement(em, `comments ${postIds.length}`, postIds, async (em) => {
    const qb = em
      .createQueryBuilder(Comment, 'c')
      .select(commentShape.select('c'))
      .where({ post: { $in: postIds.map((_, i) => param(i)) } } as never)
      .orderBy([{ createdAt: 'asc' }, { id: 'asc' }]);
    await leftJoinAuthor(em, qb, 'u', 'c');
    qb.addSelect(raw('u.name as author_name'));
    return statementOf(qb);
  });
  return runStatement<CommentRow>(em, statement, { stale });
}

/** A REST comment over comment `c` (commentShape's keys) and its author `cu`: one definition for every answer and tag. */
const COMMENT_JSON = jsonObjectSql('c', [...jsonKeysOf(commentShape), ['user', 'json?', authorJsonSql('cu.id', 'cu.name')]]);

/**
 * The comments of the post row `p`, oldest first, as `comments_json`: a text[] of their REST
 * answers (post.repository.ts embeds it), their authors as the GraphQL embed reads them.
 */
export async function commentsJsonOfPost(em: EntityManager) {
  const qb = em.createQueryBuilder(Comment, 'c').select(raw(`${jsonAggSql(COMMENT_JSON, 'c.created_at, c.id')} as comments_json`)).where('c.post_id = p.id');
  await leftJoinAuthor(em, qb, 'cu', 'c');
  return qb;
}

/** The statement of comments' REST answers (`id`, `json`) by id: a create's read-back, GraphQL's `etag` batch. */
export async function commentJsonStatement(em: EntityManager, ids: readonly number[]): Promise<Statement> {
  const qb = em.createQueryBuilder(Comment, 'c').select(['c.id', raw(`${COMMENT_JSON}::text as json`)]).where({ id: { $in: [...ids] } });
  await leftJoinAuthor(em, qb, 'cu', 'c');
  return statementOf(qb);
}

/** Comments' REST answers by id; a missing comment has none. */
export async function commentJsons(em: EntityManager, ids: readonly number[]): Promise<Map<number, string>> {
  const rows = await runStatement<{ id: number; json: string }>(em, await commentJsonStatement(em, ids));
  return new Map(rows.map((r) => [r.id, r.json]));
}

const commentJson = async (em: EntityManager, id: number) => (await commentJsons(em, [id])).get(id) ?? null;

/** An edited comment's answer (core/row-lock.ts ReadBack). */
export const writtenCommentJson = async (em: EntityManager, comment: Comment): Promise<string> => written(await commentJson(em, comment.id), `comment ${comment.id}`);

/** A comment's current tag, read in the write's transaction `tx` (core/etag.ts checkPrecondition). */
export const currentCommentTag = async (tx: EntityManager, id: number): Promise<string> => entityTag(written(await commentJson(tx, id), `comment ${id}`));
