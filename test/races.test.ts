import { Client } from 'pg';
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { buildPost, sql } from './support/blog';
import { until } from './support/wait';
import {
  batchRestoreModel,
  fireAll,
  gqlAnswer,
  makePost as makePostIn,
  POST_MODELS,
  postState as postStateOf,
  restAnswer,
  sendPostOp as sendPostOpTo,
  sendUserOp as sendUserOpTo,
  sweepModel,
  unexplained,
  USER_MODELS,
  userState,
  type PostOp,
  type PostState,
  type Surface,
  type UserOp,
} from './support/races';
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

// ---- posts ----------------------------------------------------------------------------------

const postState = (id: number) => postStateOf(app, id);
const makePost = (state: PostState) => makePostIn(app, author, state);
const sendPostOp = (surface: Surface, op: PostOp, id: number) => sendPostOpTo(api, mod, surface, op, id);

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
async function sweepRounds(surface: Surface, backdate: boolean, sweep: () => Promise<string>, said: (count: number) => string) {
  const failures: string[] = [];
  for (let batch = 0; batch < BATCHES; batch++) {
    await sql(app, 'delete from posts where deleted_at is not null');
    const posts = await Promise.all(Array.from({ length: PER_BATCH }, () => makePost('trashed')));
    if (backdate) {
      await sql(app, `update posts set deleted_at = now() - make_interval(days => ?) where id in (${posts.map(() => '?').join(',')})`, [RETENTION_DAYS + 1, ...posts.map((p) => p.id)]);
    }
    const [swept, ...restores] = await fireAll(batch, [sweep, ...posts.map((p) => () => sendPostOp(surface, 'trashRestore', p.id))]);
    const final = await Promise.all(posts.map((p) => postState(p.id)));
    const models = [sweepModel(said), ...posts.map((_, i) => batchRestoreModel(i))];
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

const sendUserOp = (surface: Surface, op: UserOp, id: number) => sendUserOpTo(api, admin, surface, op, id);

describe.each<Surface>(['rest', 'graphql'])('one user, deletes and restores at once (%s)', (surface) => {
  it('three deletes and a restore: as many 200 deletes as some order allows, and the final row agrees', async () => {
    const ops: UserOp[] = ['userDelete', 'userRestore', 'userDelete', 'userDelete'];
    const failures: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const start = round % 2 ? 'deleted' : 'live';
      const { user } = await buildUser(app);
      if (start === 'deleted') await sql(app, 'update users set deleted_at = now() where id = ?', [user.id]);
      const answers = await fireAll(round, ops.map((op) => () => sendUserOp(surface, op, user.id)));
      const failure = unexplained(`round ${round}`, start, ops.map((op) => USER_MODELS[op]), { answers, final: await userState(app, user.id) });
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
      await until(async () => (await waiting()) > 0, 'the mutation to wait on the row lock', { ms: 10_000 }).catch(() => undefined);
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
