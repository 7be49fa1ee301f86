import { Client } from 'pg';
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { buildPost, sql } from './support/blog';
import { fireAll, gqlAnswer, restAnswer, unexplained, type Model } from './support/races';
import { purgeExpiredTrash } from '../src/modules/trash/trash.service';

/**
 * Conflicting state changes fired at once (issue 13.1). Each round starts one row in a known
 * state, sends every operation of the round concurrently, reads the final row from the database
 * and checks that some one-after-the-other order of the operations gives exactly these answers
 * and this final row (test/support/races.ts). Both surfaces share the services, and are both run.
 */

let app: TestApp;
let api: ReturnType<typeof clients>;
let mod: string;
let admin: string;
let author: { id: number };

const RETENTION_DAYS = 7;

beforeAll(async () => {
  // The app's own retention run stays out of the way: the tests call purgeExpiredTrash themselves.
  app = await startTestApp({ TRASH_RETENTION_DAYS: String(RETENTION_DAYS) }, { config: { trashRetentionFirstRunMs: 3_600_000 } });
  api = clients(app.url);
  mod = (await buildUser(app, { role: 'moderator' })).token;
  admin = (await buildUser(app, { role: 'admin' })).token;
  author = (await buildUser(app)).user;
});
afterAll(() => app.close());

const ROUNDS = 30;

// ---- posts: the model ------------------------------------------------------------------------

/** A post's state as the answers show it: `gone`, or live/trashed with `+published`. */
type PostState = string;
const isTrashed = (s: PostState) => s.startsWith('trashed');
const isLive = (s: PostState) => s.startsWith('live');
const live = (s: PostState) => s.replace('trashed', 'live');
const trashed = (s: PostState) => s.replace('live', 'trashed');
const published = (s: PostState) => (s.endsWith('+published') ? s : `${s}+published`);

const POST_MODELS = {
  trashRestore: (s) => (isTrashed(s) ? [`200 ${live(s)}`, live(s)] : ['404 Not in trash', s]),
  trashDestroy: (s) => (isTrashed(s) ? ['200 Permanently deleted', 'gone'] : ['404 Not in trash', s]),
  postDelete: (s) => (isLive(s) ? ['200 Post deleted', trashed(s)] : ['404 Post not found', s]),
  /** Restoring an active post returns it unchanged (CONTRACT 8). */
  postRestore: (s) => (s === 'gone' ? ['404 Post not found', s] : [`200 ${live(s)}`, live(s)]),
  /** Publishing a published post returns it unchanged; a trashed post is not found. */
  postPublish: (s) => (isLive(s) ? [`200 ${published(s)}`, published(s)] : ['404 Post not found', s]),
} satisfies Record<string, Model<PostState>>;
type PostOp = keyof typeof POST_MODELS;

async function postState(id: number): Promise<PostState> {
  const [row] = await sql(app, 'select deleted_at, published, published_at from posts where id = ?', [id]);
  if (!row) return 'gone';
  return `${row.deleted_at ? 'trashed' : 'live'}${row.published && row.published_at ? '+published' : ''}`;
}

async function makePost(state: PostState) {
  return buildPost(app, author, { deletedAt: isTrashed(state) ? new Date() : null, published: state.endsWith('+published') });
}

// ---- posts: the requests ---------------------------------------------------------------------

type Surface = 'rest' | 'graphql';

/** What a returned post says of its state; a body for another post reads as such. */
function restPost(id: number) {
  return (b: any) => (b.id !== id ? `post ${b.id}` : `${b.deleted_at === null ? 'live' : 'trashed'}${b.published && b.published_at ? '+published' : ''}`);
}
function gqlPost(id: number) {
  return (p: any) => (p?.id !== id ? `post ${p?.id}` : `${p.deletedAt === null ? 'live' : 'trashed'}${p.published && p.publishedAt ? '+published' : ''}`);
}

const POST_FIELDS = 'id deletedAt published publishedAt';
const GQL_POST_OPS: Record<PostOp, [field: string, returnsPost: boolean]> = {
  trashRestore: ['restoreFromTrash', true],
  trashDestroy: ['deleteFromTrash', false],
  postDelete: ['deletePost', false],
  postRestore: ['restorePost', true],
  postPublish: ['publishPost', true],
};

async function sendPostOp(surface: Surface, op: PostOp, id: number): Promise<string> {
  if (surface === 'graphql') {
    const [field, returnsPost] = GQL_POST_OPS[op];
    const r = await api.gql(`mutation($id: Int!) { ${field}(id: $id) { ${returnsPost ? POST_FIELDS : 'message'} } }`, { id }, { token: mod });
    return gqlAnswer(r, field, returnsPost ? gqlPost(id) : undefined);
  }
  const [method, path] = {
    trashRestore: ['PATCH', `/trash/${id}/restore`],
    trashDestroy: ['DELETE', `/trash/${id}`],
    postDelete: ['DELETE', `/posts/${id}`],
    postRestore: ['PATCH', `/posts/${id}/restore`],
    postPublish: ['PATCH', `/posts/${id}/publish`],
  }[op];
  return restAnswer(await api.rest(method, path, { token: mod }), restPost(id));
}

/** `ROUNDS` posts, one at a time: all of `ops` at once on the post, then the final row checked. */
async function postRounds(surface: Surface, initial: (round: number) => PostState, ops: PostOp[]): Promise<void> {
  const failures: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = initial(round);
    const post = await makePost(start);
    const answers = await fireAll(round, ops.map((op) => () => sendPostOp(surface, op, post.id)));
    const failure = unexplained(`round ${round} [${ops.join(', ')}]`, start, ops.map((op) => POST_MODELS[op]), { answers, final: await postState(post.id) });
    if (failure) failures.push(failure);
  }
  expect(failures).toEqual([]);
}

describe.each<Surface>(['rest', 'graphql'])('one post, conflicting changes at once (%s)', (surface) => {
  it('restore from the trash vs permanent delete: exactly one wins, the other is 404 Not in trash', async () => {
    await postRounds(surface, () => 'trashed', ['trashRestore', 'trashDestroy']);
  });

  it('three restores and three permanent deletes at once: one 200, five 404 Not in trash', async () => {
    const ops: PostOp[] = ['trashRestore', 'trashDestroy', 'trashRestore', 'trashDestroy', 'trashRestore', 'trashDestroy'];
    await postRounds(surface, (round) => (round % 2 ? 'trashed+published' : 'trashed'), ops);
  });

  it('delete vs restore vs publish on /posts/:id/*, from live and from trashed posts', async () => {
    const ops: PostOp[] = ['postDelete', 'postDelete', 'postDelete', 'postPublish', 'postRestore'];
    await postRounds(surface, (round) => ['live', 'trashed', 'live+published'][round % 3], ops);
  });

  it('permanent delete vs restore and publish of the post vs restore from the trash', async () => {
    await postRounds(surface, () => 'trashed', ['trashDestroy', 'postRestore', 'postPublish', 'trashRestore']);
  });
});

// ---- many posts: retention and purge vs restores ---------------------------------------------

const BATCHES = 8;
const PER_BATCH = 5;

/**
 * `PER_BATCH` trashed posts restored one request each, while `sweep` removes the trash; its count
 * and every restore's answer are checked against the final rows (a sweep is one more operation
 * of the model, over all posts of the batch).
 */
async function sweepRounds(surface: Surface, backdate: boolean, sweep: () => Promise<string>, sweepModel: (count: number) => string) {
  const failures: string[] = [];
  for (let batch = 0; batch < BATCHES; batch++) {
    await sql(app, 'delete from posts where deleted_at is not null');
    const posts = await Promise.all(Array.from({ length: PER_BATCH }, () => makePost('trashed')));
    if (backdate) {
      await sql(app, `update posts set deleted_at = now() - make_interval(days => ?) where id in (${posts.map(() => '?').join(',')})`, [RETENTION_DAYS + 1, ...posts.map((p) => p.id)]);
    }
    const [swept, ...restores] = await fireAll(batch, [sweep, ...posts.map((p) => () => sendPostOp(surface, 'trashRestore', p.id))]);
    const final = await Promise.all(posts.map((p) => postState(p.id)));
    const models: Model<PostState[]>[] = [
      (states) => [sweepModel(states.filter(isTrashed).length), states.map((s) => (isTrashed(s) ? 'gone' : s))],
      ...posts.map((_, i): Model<PostState[]> => (states) => {
        const [answer, next] = POST_MODELS.trashRestore(states[i]);
        return [answer, states.map((s, j) => (j === i ? next : s))];
      }),
    ];
    const failure = unexplained(`batch ${batch}`, posts.map(() => 'trashed'), models, { answers: [swept, ...restores], final });
    if (failure) failures.push(failure);
  }
  expect(failures).toEqual([]);
}

describe.each<Surface>(['rest', 'graphql'])('the trash emptied while posts are restored (%s)', (surface) => {
  it('the retention job vs restores: a restored post stays, a purged one answers 404 Not in trash', async () => {
    await sweepRounds(surface, true, async () => `purged ${await purgeExpiredTrash(app.orm, RETENTION_DAYS)}`, (n) => `purged ${n}`);
  });

  it('purge vs restores: the count is exactly the posts gone, each restore agrees with its row', async () => {
    const sweep =
      surface === 'rest'
        ? async () => restAnswer(await api.rest('DELETE', '/trash', { token: admin }))
        : async () => gqlAnswer(await api.gql('mutation { purgeTrash { message count } }', undefined, { token: admin }), 'purgeTrash', (d) => `${d.message} ${d.count}`);
    const said = (n: number) => `Permanently deleted ${n} ${n === 1 ? 'post' : 'posts'}`;
    await sweepRounds(surface, false, sweep, (n) => (surface === 'rest' ? `200 ${said(n)}` : `200 ${said(n)} ${n}`));
  });
});

// ---- users -----------------------------------------------------------------------------------

const USER_MODELS = {
  userDelete: (s) => (s === 'live' ? ['200 User deleted', 'deleted'] : ['404 User not found', s]),
  /** Restoring an active user returns them unchanged. */
  userRestore: (s) => ['200 user', s === 'deleted' ? 'live' : s],
} satisfies Record<string, Model<string>>;
type UserOp = keyof typeof USER_MODELS;

async function sendUserOp(surface: Surface, op: UserOp, id: number): Promise<string> {
  const describeUser = (u: any) => (u?.id === id ? 'user' : `user ${u?.id}`);
  if (surface === 'graphql') {
    const field = op === 'userDelete' ? 'deleteUser' : 'restoreUser';
    const r = await api.gql(`mutation($id: Int!) { ${field}(id: $id) { ${op === 'userDelete' ? 'message' : 'id'} } }`, { id }, { token: admin });
    return gqlAnswer(r, field, op === 'userRestore' ? describeUser : undefined);
  }
  const r = op === 'userDelete' ? await api.rest('DELETE', `/admin/users/${id}`, { token: admin }) : await api.rest('PATCH', `/admin/users/${id}/restore`, { token: admin });
  return restAnswer(r, describeUser);
}

describe.each<Surface>(['rest', 'graphql'])('one user, deletes and restores at once (%s)', (surface) => {
  it('three deletes and a restore: as many 200 deletes as some order allows, and the final row agrees', async () => {
    const ops: UserOp[] = ['userDelete', 'userRestore', 'userDelete', 'userDelete'];
    const failures: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const start = round % 2 ? 'deleted' : 'live';
      const { user } = await buildUser(app);
      if (start === 'deleted') await sql(app, 'update users set deleted_at = now() where id = ?', [user.id]);
      const answers = await fireAll(round, ops.map((op) => () => sendUserOp(surface, op, user.id)));
      const [row] = await sql(app, 'select deleted_at from users where id = ?', [user.id]);
      const failure = unexplained(`round ${round}`, start, ops.map((op) => USER_MODELS[op]), { answers, final: row.deleted_at ? 'deleted' : 'live' });
      if (failure) failures.push(failure);
    }
    expect(failures).toEqual([]);
  });
});

describe('deleteUser and restoreUser forget what the request read before them', () => {
  it('one document reads an author, deletes the user, reads again (null), restores, reads again', async () => {
    const { user } = await buildUser(app, { name: 'Reread' });
    const post = await buildPost(app, user, { published: true });
    // publishPost of a published post writes nothing, so only the user mutations can clear the loaders.
    const doc = `mutation($post: Int!, $user: Int!) {
      before: publishPost(id: $post) { user { id name } }
      deleteUser(id: $user) { message }
      during: publishPost(id: $post) { user { id name } }
      restoreUser(id: $user) { id }
      after: publishPost(id: $post) { user { id name } }
    }`;
    const r = await api.gql(doc, { post: post.id, user: user.id }, { token: admin });
    expect(r.errors).toBeUndefined();
    expect(r.data).toEqual({
      before: { user: { id: user.id, name: 'Reread' } },
      deleteUser: { message: 'User deleted' },
      during: { user: null },
      restoreUser: { id: user.id },
      after: { user: { id: user.id, name: 'Reread' } },
    });
  });
});

/**
 * A guard more than a fix: MikroORM already re-reads an entity found with a `filters` option, but
 * a transition answered from the identity map (what the request loaded earlier) fails here.
 */
describe('a change reads the row as it is now, not as the request loaded it earlier', () => {
  it('one document restores a post, waits on another post while the first is trashed, restores the first again', async () => {
    const p1 = await buildPost(app, author);
    const p2 = await buildPost(app, author);
    // Holds p2's row lock, so the document below stops at its second field, after loading p1.
    const holder = new Client({ connectionString: app.databaseUrl });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select id from posts where id = $1 for update', [p2.id]);
      const doc = api.gql(
        `mutation($p1: Int!, $p2: Int!) { a: restorePost(id: $p1) { deletedAt } b: deletePost(id: $p2) { message } c: restorePost(id: $p1) { deletedAt } }`,
        { p1: p1.id, p2: p2.id },
        { token: mod },
      );
      const waiting = async () => (await holder.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)).rows[0].n;
      const deadline = Date.now() + 10_000;
      while ((await waiting()) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(await waiting()).toBe(1);
      await sql(app, 'update posts set deleted_at = now() where id = ?', [p1.id]);
      await holder.query('commit');
      const r = await doc;
      expect(r.errors).toBeUndefined();
      // `a` found it active; `c` must find it trashed and restore it, not answer from what `a` loaded.
      expect(r.data).toEqual({ a: { deletedAt: null }, b: { message: 'Post deleted' }, c: { deletedAt: null } });
      expect(await postState(p1.id)).toBe('live');
    } finally {
      await holder.end();
    }
  });
});
