import type { EntityManager } from '@mikro-orm/postgresql';
import { readContextOf } from '../core/context';
import { commentsStatement } from './post/post.loaders';
import { POSTS_PER_PAGE, postViewByIdStatement, postViewsPageStatement } from './post/post.queries';
import { postJsonStatement } from './post/post.rest';
import { actorStatement } from './user/user.queries';

/**
 * The statements most requests run, built (not run) on the ORM's root EntityManager at start-up
 * so that db/statements.ts names them and every connection prepares them (src/main.ts passes
 * this to initOrm). Each is built by the function the request itself calls, with the request's
 * arguments but for its values (ids, the page), which are parameters, so a request finds the
 * named entry under the same key. A request whose key differs (a filter such as the tenant, a
 * published-only list, a shorter last page) runs its own statement unnamed, as before.
 * Not GET /posts: a named statement gets PostgreSQL's generic plan after a few runs, and for the
 * REST page (each post's comments as JSON in a sub-query) that plan hash-joins every user instead
 * of looking up ten (6.05 against 3.21 ms a page, EXPLAIN ANALYZE, docs/performance.md); its
 * parse and plan are a small part of its cost anyway.
 *
 * They are named hot_1, hot_2, ... in the order below (that is what a statement log or a trace
 * shows: `execute hot_2(...)` is one post's REST answer). test/named-statements.test.ts starts the
 * service this way and checks that each of these requests sends `execute`.
 */
export async function buildHotReads(em: EntityManager): Promise<void> {
  const ctx = readContextOf(em);
  await postJsonStatement(em, 1); // GET /posts/:id
  await postViewsPageStatement(ctx); // GraphQL posts(page: N)
  await commentsStatement(em, Array.from({ length: POSTS_PER_PAGE }, (_, i) => i + 1)); // ... and its posts' comments
  await postViewByIdStatement(ctx, 1); // GraphQL post(id)
  await commentsStatement(em, [1]); // ... and its comments
  await actorStatement(em, 1); // every request with a bearer token
}
