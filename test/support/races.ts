import type { clients, GqlResponse, RestResponse } from './client';
import type { TestApp } from './harness';
import { buildPost, sql } from './blog';

/**
 * Checking concurrent state changes against a sequential model. Conflicting requests are fired at
 * once, so any order of them is a correct outcome, but only an order: every answer and the final
 * row must come from running the operations one after the other in some order (linearizability;
 * no real-time constraint among requests in flight together). With at most a handful of
 * operations, trying every order is cheap and states the allowed set exactly.
 */

/** How one operation changes the model state, and what it answers from that state. */
export type Model<S> = (state: S) => [answer: string, next: S];

export interface Outcome<S> {
  answers: string[];
  final: S;
}

function* permutations(n: number, prefix: number[] = []): Generator<number[]> {
  if (prefix.length === n) {
    yield prefix;
    return;
  }
  for (let i = 0; i < n; i++) if (!prefix.includes(i)) yield* permutations(n, [...prefix, i]);
}

/** Every outcome some sequential order of `ops` produces from `initial` (answers in `ops`' order). */
function allowedOutcomes<S>(initial: S, ops: Model<S>[]): Outcome<S>[] {
  const seen = new Map<string, Outcome<S>>();
  for (const order of permutations(ops.length)) {
    const answers: string[] = new Array(ops.length);
    let state = initial;
    for (const i of order) [answers[i], state] = ops[i](state);
    const outcome = { answers, final: state };
    seen.set(JSON.stringify(outcome), outcome);
  }
  return [...seen.values()];
}

/** A round whose observed answers and final state no sequential order explains, for the report; null when explained. */
export function unexplained<S>(round: string, initial: S, ops: Model<S>[], observed: Outcome<S>): string | null {
  const allowed = allowedOutcomes(initial, ops);
  const key = JSON.stringify(observed);
  if (allowed.some((o) => JSON.stringify(o) === key)) return null;
  return `${round}: from ${JSON.stringify(initial)} got ${key}`;
}

/** The answer of a REST call as the models spell it: status and message, or status and what `describe` says of the body. */
export function restAnswer(r: RestResponse, describe?: (body: any) => string): string {
  if (r.status === 200 && describe && !('message' in (r.body ?? {}))) return `200 ${describe(r.body)}`;
  return `${r.status} ${r.body?.message}`;
}

/** The same spelling for a GraphQL call, so one model checks both surfaces (NOT_FOUND reads as 404). */
export function gqlAnswer(r: GqlResponse, field: string, describe?: (data: any) => string): string {
  if (r.errors?.length) {
    const code = r.errors[0].extensions?.code;
    return `${code === 'NOT_FOUND' ? 404 : code} ${r.errors[0].message}`;
  }
  const value = r.data?.[field];
  return `200 ${describe ? describe(value) : value?.message}`;
}

/**
 * Starts every request at once, beginning with a different one each round (requests go out in
 * the order they are started, so the first often wins), and returns the answers in `sends`' order.
 */
export function fireAll<T>(round: number, sends: Array<() => Promise<T>>): Promise<T[]> {
  const n = sends.length;
  const started: Promise<T>[] = new Array(n);
  for (let k = 0; k < n; k++) {
    const i = (round + k) % n;
    started[i] = sends[i]();
  }
  return Promise.all(started);
}

// ---- posts and users: the models and the requests, for test/races.test.ts and test/instances-races.test.ts

type Api = ReturnType<typeof clients>;
export type Surface = 'rest' | 'graphql';

/** A post's state as the answers show it: `gone`, or live/trashed with `+published`. */
export type PostState = string;
const isTrashed = (s: PostState) => s.startsWith('trashed');
const isLive = (s: PostState) => s.startsWith('live');
const live = (s: PostState) => s.replace('trashed', 'live');
const trashed = (s: PostState) => s.replace('live', 'trashed');
const published = (s: PostState) => (s.endsWith('+published') ? s : `${s}+published`);

export const POST_MODELS = {
  trashRestore: (s) => (isTrashed(s) ? [`200 ${live(s)}`, live(s)] : ['404 Not in trash', s]),
  trashDestroy: (s) => (isTrashed(s) ? ['200 Permanently deleted', 'gone'] : ['404 Not in trash', s]),
  postDelete: (s) => (isLive(s) ? ['200 Post deleted', trashed(s)] : ['404 Post not found', s]),
  /** Restoring an active post returns it unchanged (CONTRACT 8). */
  postRestore: (s) => (s === 'gone' ? ['404 Post not found', s] : [`200 ${live(s)}`, live(s)]),
  /** Publishing a published post returns it unchanged; a trashed post is not found. */
  postPublish: (s) => (isLive(s) ? [`200 ${published(s)}`, published(s)] : ['404 Post not found', s]),
} satisfies Record<string, Model<PostState>>;
export type PostOp = keyof typeof POST_MODELS;

export async function postState(app: TestApp, id: number): Promise<PostState> {
  const [row] = await sql(app, 'select deleted_at, published, published_at from posts where id = ?', [id]);
  if (!row) return 'gone';
  return `${row.deleted_at ? 'trashed' : 'live'}${row.published && row.published_at ? '+published' : ''}`;
}

export async function makePost(app: TestApp, author: { id: number }, state: PostState) {
  return buildPost(app, author, { deletedAt: isTrashed(state) ? new Date() : null, published: state.endsWith('+published') });
}

/** What a returned post says of its state; a body for another post reads as such. */
function restPost(id: number) {
  return (b: any) => (b.id !== id ? `post ${b.id}` : `${b.deleted_at === null ? 'live' : 'trashed'}${b.published && b.published_at ? '+published' : ''}`);
}
function gqlPost(id: number) {
  return (p: any) => (p?.id !== id ? `post ${p?.id}` : `${p.deletedAt === null ? 'live' : 'trashed'}${p.published && p.publishedAt ? '+published' : ''}`);
}

const STATE_FIELDS = 'id deletedAt published publishedAt';
const GQL_POST_OPS: Record<PostOp, [field: string, returnsPost: boolean]> = {
  trashRestore: ['restoreFromTrash', true],
  trashDestroy: ['deleteFromTrash', false],
  postDelete: ['deletePost', false],
  postRestore: ['restorePost', true],
  postPublish: ['publishPost', true],
};

/** One post operation on `api` as a moderator (`token`), answered as POST_MODELS spells it. */
export async function sendPostOp(api: Api, token: string, surface: Surface, op: PostOp, id: number): Promise<string> {
  if (surface === 'graphql') {
    const [field, returnsPost] = GQL_POST_OPS[op];
    const r = await api.gql(`mutation($id: Int!) { ${field}(id: $id) { ${returnsPost ? STATE_FIELDS : 'message'} } }`, { id }, { token });
    return gqlAnswer(r, field, returnsPost ? gqlPost(id) : undefined);
  }
  const [method, path] = {
    trashRestore: ['PATCH', `/trash/${id}/restore`],
    trashDestroy: ['DELETE', `/trash/${id}`],
    postDelete: ['DELETE', `/posts/${id}`],
    postRestore: ['PATCH', `/posts/${id}/restore`],
    postPublish: ['PATCH', `/posts/${id}/publish`],
  }[op];
  return restAnswer(await api.rest(method, path, { token }), restPost(id));
}

/**
 * The whole trash emptied (retention or purge) is one more operation over every post of a batch:
 * it answers `said(count of trashed posts)` and leaves none of them.
 */
export function sweepModel(said: (count: number) => string): Model<PostState[]> {
  return (states) => [said(states.filter(isTrashed).length), states.map((s) => (isTrashed(s) ? 'gone' : s))];
}

/** Restoring post `i` of a batch from the trash, as a model over the batch. */
export function batchRestoreModel(i: number): Model<PostState[]> {
  return (states) => {
    const [answer, next] = POST_MODELS.trashRestore(states[i]);
    return [answer, states.map((s, j) => (j === i ? next : s))];
  };
}

export const USER_MODELS = {
  userDelete: (s) => (s === 'live' ? ['200 User deleted', 'deleted'] : ['404 User not found', s]),
  /** Restoring an active user returns them unchanged. */
  userRestore: (s) => ['200 user', s === 'deleted' ? 'live' : s],
} satisfies Record<string, Model<string>>;
export type UserOp = keyof typeof USER_MODELS;

/** One user operation on `api` as an admin (`token`), answered as USER_MODELS spells it. */
export async function sendUserOp(api: Api, token: string, surface: Surface, op: UserOp, id: number): Promise<string> {
  const describeUser = (u: any) => (u?.id === id ? 'user' : `user ${u?.id}`);
  if (surface === 'graphql') {
    const field = op === 'userDelete' ? 'deleteUser' : 'restoreUser';
    const r = await api.gql(`mutation($id: Int!) { ${field}(id: $id) { ${op === 'userDelete' ? 'message' : 'id'} } }`, { id }, { token });
    return gqlAnswer(r, field, op === 'userRestore' ? describeUser : undefined);
  }
  const r = op === 'userDelete' ? await api.rest('DELETE', `/admin/users/${id}`, { token }) : await api.rest('PATCH', `/admin/users/${id}/restore`, { token });
  return restAnswer(r, describeUser);
}

export async function userState(app: TestApp, id: number): Promise<string> {
  const [row] = await sql(app, 'select deleted_at from users where id = ?', [id]);
  return row.deleted_at ? 'deleted' : 'live';
}
