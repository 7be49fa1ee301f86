import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './api.js';

/**
 * The REST example: registers, writes a post, lists posts, with openapi-fetch typed by the
 * types openapi-typescript generated from the service's OpenAPI document (rest/openapi.json, a
 * copy of /openapi.json): paths, parameters, bodies and each status's answer are checked by tsc.
 *
 *   API_URL=http://localhost:3000 npm run rest
 *
 * Its last line is a JSON summary, which test/examples.test.ts reads.
 */
type Post = components['schemas']['Post'];

const api = process.env.API_URL ?? 'http://localhost:3000';
const client = createClient<paths>({ baseUrl: api });

let token: string | undefined;
// Every request after login carries the token (openapi-fetch's middleware).
const auth: Middleware = {
  onRequest({ request }) {
    if (token) request.headers.set('authorization', `Bearer ${token}`);
    return request;
  },
};
client.use(auth);

/** Stops the example with the service's message when a call fails (`error` is the documented error body). */
function fail(what: string, status: number, error: { message: string; errors?: { field: string | null; message: string }[] }): never {
  const fields = error.errors?.map((e) => `${e.field ?? '(body)'}: ${e.message}`).join('; ');
  throw new Error(`${what}: ${status} ${error.message}${fields ? ` (${fields})` : ''}`);
}

/** The steps above, in order; any failure ends the example with the service's message. */
async function main(): Promise<void> {
  const stamp = Date.now().toString(36);
  const registered = await client.POST('/auth/register', {
    body: { name: 'REST Example', email: `rest-example-${stamp}@example.com`, password: 'a long enough passphrase' },
  });
  if (!registered.data) fail('register', registered.response.status, registered.error);
  token = registered.data.token;
  const user = registered.data.user;
  console.log(`registered ${user.name} (user ${user.id}, ${user.email})`);

  // A create that may be retried (a timeout, a dropped connection) carries an Idempotency-Key: the
  // repeat answers the post the first one created (Idempotent-Replayed: true), never a second post.
  const create = { body: { title: `Typed from REST ${stamp}`, body: 'Written with openapi-fetch.' }, params: { header: { 'Idempotency-Key': `create-post-${stamp}` } } };
  const created = await client.POST('/posts', create);
  if (!created.data) fail('create a post', created.response.status, created.error);
  const post: Post = created.data;
  const retried = await client.POST('/posts', create);
  if (!retried.data) fail('retry the create', retried.response.status, retried.error);
  if (retried.data.id !== post.id) throw new Error(`the retried create wrote post ${retried.data.id} besides ${post.id}`);
  console.log(`created post ${post.id} "${post.title}" (${post.slug}), published: ${post.published}; retried with its key: the same post`);

  // A safe write: publish only the version we created (its ETag). Had someone edited it since,
  // the answer would be 412 with the current ETag, and nothing written.
  const etag = created.response.headers.get('etag') ?? '*';
  const published = await client.PATCH('/posts/{id}/publish', { params: { path: { id: post.id }, header: { 'If-Match': etag } } });
  if (!published.data) fail('publish', published.response.status, published.error);

  // The list's shape follows `paginate`: the page format carries totals, the others do not.
  const listed = await client.GET('/posts', { params: { query: { page: 1, author: user.id } } });
  if (!listed.data) fail('list posts', listed.response.status, listed.error);
  const page = listed.data;
  if (!('total' in page)) throw new Error('paginate=page (the default) answers with totals');
  const ours = page.data.find((p) => p.id === post.id);
  console.log(`posts by ${user.name}: ${page.total}, page ${page.currentPage} of ${page.lastPage}; ours is published: ${ours?.published}`);

  const one = await client.GET('/posts/{id}', { params: { path: { id: post.id } } });
  if (!one.data) fail('read the post', one.response.status, one.error);
  console.log(`GET /posts/${post.id}: "${one.data.title}" by ${one.data.user?.name ?? '(deleted user)'}, ${one.data.comments_count} comment(s)`);

  // A documented refusal comes back typed too: a wrong page number is a 422 with field errors.
  const refused = await client.GET('/posts', { params: { query: { page: 0 } } });
  // `error` is the union of the documented error bodies; only the 422 one lists fields.
  const refusal = refused.error
    ? { status: refused.response.status, message: refused.error.message, fields: 'errors' in refused.error ? refused.error.errors.map((e) => e.field) : [] }
    : null;
  console.log(`GET /posts?page=0: ${refusal ? `${refusal.status} ${refusal.message} (${refusal.fields.join(', ')})` : 'accepted?!'}`);

  console.log(
    JSON.stringify({
      user: { id: user.id, name: user.name, email: user.email },
      post: { id: post.id, slug: post.slug, published: one.data.published },
      listed: { total: page.total, ids: page.data.map((p) => p.id) },
      refusal,
    }),
  );
}

main().catch((err: unknown) => {
  console.error(`rest example failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
