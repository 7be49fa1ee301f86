import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { POST_FIELDS } from './support/blog';
import { snake } from './support/snake';

/**
 * The same scenario through REST and through GraphQL yields the same data (GraphQL's camelCase
 * snake_cased) and the same errors (REST status ↔ GraphQL code, same message and field errors).
 */
let app: TestApp;
let api: ReturnType<typeof clients>;

beforeAll(async () => {
  app = await startTestApp();
  api = clients(app.url);
});
afterAll(() => app.close());

const CODE: Record<number, string> = { 401: 'UNAUTHENTICATED', 403: 'FORBIDDEN', 404: 'NOT_FOUND', 422: 'BAD_USER_INPUT' };
type Outcome = { ok: true; data: unknown } | { ok: false; code: string; message: string; errors?: unknown };

const ignoreVolatile = (v: any): any => JSON.parse(JSON.stringify(v), (k, val) => (['id', 'user_id', 'post_id', 'created_at', 'updated_at', 'published_at', 'deleted_at', 'slug'].includes(k) ? typeof val : val));

async function viaRest(method: string, path: string, token?: string, body?: unknown): Promise<Outcome> {
  const r = await api.rest(method, path, { token, body });
  if (r.status < 300) return { ok: true, data: r.body };
  return { ok: false, code: CODE[r.status] ?? String(r.status), message: r.body.message, ...(r.body.errors ? { errors: r.body.errors } : {}) };
}

async function viaGql(query: string, variables: Record<string, unknown>, token?: string): Promise<Outcome> {
  const g = await api.gql(query, variables, { token });
  if (g.errors) {
    const e = g.errors[0];
    return { ok: false, code: e.extensions!.code!, message: e.message, ...(e.extensions?.errors ? { errors: e.extensions.errors } : {}) };
  }
  const value = Object.values(g.data as object)[0];
  return { ok: true, data: snake(value) };
}

/** Runs one scenario on a surface; each step returns an Outcome. */
async function scenario(surface: 'rest' | 'gql') {
  const { token: owner } = await buildUser(app, { name: 'Owner' });
  const { token: stranger } = await buildUser(app, { name: 'Stranger' });
  const { user: modUser, token: mod } = await buildUser(app, { role: 'moderator', name: 'Mod' });
  void modUser;
  const R = surface === 'rest';
  const out: Outcome[] = [];
  const step = async (rest: () => Promise<Outcome>, gql: () => Promise<Outcome>) => {
    const o = await (R ? rest() : gql());
    out.push(o);
    return o;
  };
  const P = `{ ${POST_FIELDS} }`;
  await step(() => viaRest('POST', '/posts', undefined, { title: 'Same', body: 'x' }), () => viaGql(`mutation($t: String!, $b: String!) { createPost(title: $t, body: $b) { id } }`, { t: 'Same', b: 'x' }));
  await step(() => viaRest('POST', '/posts', owner, { title: '', body: '' }), () => viaGql(`mutation($t: String!, $b: String!) { createPost(title: $t, body: $b) { id } }`, { t: '', b: '' }, owner));
  const created = (await step(() => viaRest('POST', '/posts', owner, { title: 'Parity Post', body: 'Body' }), () => viaGql(`mutation($t: String!, $b: String!) { createPost(title: $t, body: $b) ${P} }`, { t: 'Parity Post', b: 'Body' }, owner))) as { data: { id: number } };
  const id = created.data.id;
  await step(() => viaRest('POST', `/posts/${id}/comments`, stranger, { body: 'First!' }), () => viaGql(`mutation($p: Int!) { addComment(postId: $p, body: "First!") { id postId userId body createdAt updatedAt user { id name } } }`, { p: id }, stranger));
  await step(() => viaRest('POST', `/posts/${id}/comments`, stranger, { body: '' }), () => viaGql(`mutation($p: Int!) { addComment(postId: $p, body: "") { id } }`, { p: id }, stranger));
  await step(() => viaRest('PATCH', `/posts/${id}/publish`, stranger), () => viaGql(`mutation($id: Int!) { publishPost(id: $id) { id } }`, { id }, stranger));
  await step(() => viaRest('PATCH', `/posts/${id}/publish`, owner), () => viaGql(`mutation($id: Int!) { publishPost(id: $id) ${P} }`, { id }, owner));
  await step(() => viaRest('GET', `/posts/${id}`), () => viaGql(`query($id: Int!) { post(id: $id) ${P} }`, { id }));
  await step(() => viaRest('DELETE', `/posts/${id}`, owner), () => viaGql(`mutation($id: Int!) { deletePost(id: $id) { message } }`, { id }, owner));
  await step(() => viaRest('GET', `/posts/${id}`), () => viaGql(`query($id: Int!) { post(id: $id) { id } }`, { id }));
  await step(() => viaRest('GET', '/trash', stranger), () => viaGql(`{ trash { total } }`, {}, stranger));
  await step(() => viaRest('PATCH', `/trash/${id}/restore`, mod), () => viaGql(`mutation($id: Int!) { restoreFromTrash(id: $id) ${P} }`, { id }, mod));
  await step(() => viaRest('DELETE', `/trash/${id}`, mod), () => viaGql(`mutation($id: Int!) { deleteFromTrash(id: $id) { message } }`, { id }, mod));
  await step(() => viaRest('DELETE', `/posts/${id}`, mod), () => viaGql(`mutation($id: Int!) { deletePost(id: $id) { message } }`, { id }, mod));
  await step(() => viaRest('DELETE', `/trash/${id}`, mod), () => viaGql(`mutation($id: Int!) { deleteFromTrash(id: $id) { message } }`, { id }, mod));
  await step(() => viaRest('GET', `/posts?author=0`), () => viaGql(`{ posts(author: 0) { total } }`, {}));
  await step(() => viaRest('GET', `/posts?paginate=cursor&cursor=nope`), () => viaGql(`{ postsCursor(cursor: "nope") { perPage } }`, {}));
  return out.map(ignoreVolatile);
}

it('REST and GraphQL give the same data and the same errors for one scenario', async () => {
  const rest = await scenario('rest');
  const gql = await scenario('gql');
  expect(gql).toEqual(rest);
  // and the scenario really covered successes and each kind of error
  expect(rest.filter((o: Outcome) => !o.ok).map((o: any) => o.code).sort()).toEqual(
    ['BAD_USER_INPUT', 'BAD_USER_INPUT', 'BAD_USER_INPUT', 'BAD_USER_INPUT', 'FORBIDDEN', 'FORBIDDEN', 'NOT_FOUND', 'NOT_FOUND', 'UNAUTHENTICATED'],
  );
});
