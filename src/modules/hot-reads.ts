import type { EntityManager } from '@mikro-orm/postgresql';
import { readContextOf } from '../core/context';
import { commentsStatement } from './post/post.loaders';
import { POSTS_PER_PAGE, postViewByIdStatement, postViewsPageStatement } from './post/post.queries';
import { postJsonStatement, postPageJsonStatement } from './post/post.rest';
import { actorStatement } from './user/user.queries';

/**
 * The statements most requests run, built (not run) on the ORM's root EntityManager at start-up
 * so that db/statements.ts names them and every connection prepares them (src/main.ts passes
 * this to initOrm). Each is built by the function the request itself calls, with the request's
 * arguments but for its values (ids, the page), which are parameters, so a request finds the
 * named entry under the same key. A request whose key differs (a filter such as the tenant, a
 * published-only list, a shorter last page) runs its own statement unnamed, as before.
 * PostgreSQL runs a named statement on a generic plan after a few runs; the shape's own values
 * (the page size) are literals in its text (db/statements.ts Named), so that plan knows a page
 * reads ten rows.
 *
 * They are named hot_1, hot_2, ... in the order below (that is what a statement log or a trace
 * shows: `execute hot_2(...)` is one post's REST answer). test/named-statements.test.ts starts the
 * service this way and checks that each of these requests sends `execute`.
 */
export async function buildHotReads(em: EntityManager): Promise<void> {
  const ctx = readContextOf(em);
  await postPageJsonStatement(ctx, 'version'); // GET /posts?page=N, its total counted before (db/list-totals.ts)
  await postPageJsonStatement(ctx, 'count'); // ... and counting, after a change
  await postJsonStatement(em, 1); // GET /posts/:id
  await postViewsPageStatement(ctx, 'version'); // GraphQL posts(page: N)
  await postViewsPageStatement(ctx, 'count');
  await commentsStatement(em, Array.from({ length: POSTS_PER_PAGE }, (_, i) => i + 1)); // ... and its posts' comments
  await postViewByIdStatement(ctx, 1); // GraphQL post(id)
  await commentsStatement(em, [1]); // ... and its comments
  await actorStatement(em, 1); // every request with a bearer token
}
