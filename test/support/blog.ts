import type { TestApp } from './harness';
import { until } from './wait';
import { Comment } from '../../src/modules/comment/comment.entity';
import { Post } from '../../src/modules/post/post.entity';
import { User } from '../../src/modules/user/user.entity';

let seq = 0;

/** A post written straight to the database (unique slug), optionally trashed or published. */
export async function buildPost(
  app: TestApp,
  user: { id: number },
  attrs: { title?: string; body?: string; published?: boolean; deletedAt?: Date | null; createdAt?: Date } = {},
) {
  const em = app.orm.em.fork();
  const n = ++seq;
  const post = em.create(Post, {
    user: em.getReference(User, user.id),
    title: attrs.title ?? `Post ${n}`,
    slug: `factory-post-${process.pid}-${n}-${Math.random().toString(36).slice(2, 8)}`,
    body: attrs.body ?? `Body ${n}`,
    published: attrs.published ?? false,
    publishedAt: attrs.published ? new Date() : null,
    deletedAt: attrs.deletedAt ?? null,
    ...(attrs.createdAt ? { createdAt: attrs.createdAt } : {}),
  } as Post);
  await em.flush();
  return post;
}

export async function buildComment(app: TestApp, post: { id: number }, user: { id: number }, body = 'A comment') {
  const em = app.orm.em.fork();
  const c = em.create(Comment, { post: em.getReference(Post, post.id), user: em.getReference(User, user.id), body } as Comment);
  await em.flush();
  return c;
}

/** Runs SQL directly (bypasses filters), for arranging state the API cannot reach. */
export async function sql<T = any>(app: TestApp, query: string, params: unknown[] = []): Promise<T[]> {
  return app.orm.em.getConnection().execute(query, params);
}

export const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

export const POST_FIELDS = 'id userId title slug body published publishedAt createdAt updatedAt deletedAt user { id name } comments { id postId userId body createdAt updatedAt user { id name } } commentsCount';

/**
 * Asks `probe` until it returns exactly one row (every 50 ms, for at most `tries` asks): how a
 * test waits for the service's statement to block on a lock the test holds. That row, or
 * undefined once the deadline passes (the caller's expectation then says what was missing).
 */
export async function untilOneRow<T>(probe: () => Promise<{ rows: T[] }>, tries = 100): Promise<T | undefined> {
  const one = async () => {
    const { rows } = await probe();
    return rows.length === 1 && { row: rows[0] };
  };
  return until(one, 'exactly one row', { ms: tries * 50, everyMs: 50 }).then(({ row }) => row, () => undefined);
}
