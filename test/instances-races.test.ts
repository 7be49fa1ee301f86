import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { sql } from './support/blog';
import { buildService, removeService, startInstance, stopInstance, type Instance } from './support/instances';
import {
  batchRestoreModel,
  fireAll,
  makePost,
  POST_MODELS,
  postState,
  restAnswer,
  sendPostOp,
  sendUserOp,
  sweepModel,
  unexplained,
  USER_MODELS,
  userState,
  type PostOp,
  type PostState,
  type Surface,
  type UserOp,
} from './support/races';

/**
 * The races of test/races.test.ts with the conflicting requests split across two instances on
 * one database (issue 15): the row lock lives in PostgreSQL, so a change on one instance and a
 * change on the other queue on it just as two requests to one instance do. Checked as there:
 * every answer and the final rows must come from some one-after-the-other order of the requests.
 *
 * Its own two instances rather than test/instances.test.ts's: those must keep their expired
 * posts until the retention job's first run (a purge here would take them) and are killed by
 * that file's last test. The in-process app only writes the rows and signs the tokens (same
 * secret as the instances); no request of a round goes to it.
 */
jest.setTimeout(180_000);

const SECRET = 'instances-races-secret-that-is-long-enough-to-pass';
const ROUNDS = 20;

let app: TestApp;
let a: Instance;
let b: Instance;
let on: { a: ReturnType<typeof clients>; b: ReturnType<typeof clients> };
let mod: string;
let admin: string;
let author: { id: number };

beforeAll(async () => {
  buildService();
  // The in-process app's retention run stays out of the way (it would purge the batches below).
  app = await startTestApp({ JWT_SECRET: SECRET }, { config: { trashRetentionFirstRunMs: 3_600_000 } });
  const env = { DATABASE_URL: app.databaseUrl, JWT_SECRET: SECRET, BCRYPT_COST: '4', APP_URL: 'http://app.test' };
  a = startInstance(env);
  b = startInstance(env);
  await Promise.all([a.ready, b.ready]);
  on = { a: clients(a.url()), b: clients(b.url()) };
  mod = (await buildUser(app, { role: 'moderator' })).token;
  admin = (await buildUser(app, { role: 'admin' })).token;
  author = (await buildUser(app)).user;
});

afterAll(async () => {
  await Promise.all([stopInstance(a), stopInstance(b)]);
  await app?.close();
  removeService();
});

/** One request of a round: which operation, on which instance, over which surface. */
type Sent<Op> = [op: Op, at: 'a' | 'b', surface: Surface];

/** Odd rounds swap the instances, so each operation is tried on both. */
const at = (round: number, where: 'a' | 'b') => (round % 2 ? ({ a: 'b', b: 'a' } as const)[where] : where);

async function postRounds(initial: (round: number) => PostState, sent: Sent<PostOp>[]): Promise<void> {
  const failures: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = initial(round);
    const post = await makePost(app, author, start);
    const answers = await fireAll(round, sent.map(([op, where, surface]) => () => sendPostOp(on[at(round, where)], mod, surface, op, post.id)));
    const label = `round ${round} [${sent.map(([op, where, s]) => `${op}@${at(round, where)}/${s}`).join(', ')}]`;
    const failure = unexplained(label, start, sent.map(([op]) => POST_MODELS[op]), { answers, final: await postState(app, post.id) });
    if (failure) failures.push(failure);
  }
  expect(failures).toEqual([]);
}

describe('one post, conflicting changes on two instances at once', () => {
  it('restore from the trash on one instance vs permanent delete on the other (REST): one wins, the other is 404 Not in trash', async () => {
    await postRounds(() => 'trashed', [
      ['trashRestore', 'a', 'rest'],
      ['trashDestroy', 'b', 'rest'],
    ]);
  });

  it.each<Surface>(['rest', 'graphql'])('delete vs restore vs publish on /posts/:id/*, split across the instances (%s)', async (surface) => {
    await postRounds((round) => ['live', 'trashed', 'live+published'][round % 3], [
      ['postDelete', 'a', surface],
      ['postDelete', 'b', surface],
      ['postDelete', 'a', surface],
      ['postPublish', 'b', surface],
      ['postRestore', 'a', surface],
    ]);
  });
});

describe('one user, deleted on one instance and restored on the other at once', () => {
  it('admin deletes on both and a restore (REST): the answers and the final row agree with some order', async () => {
    const sent: Sent<UserOp>[] = [
      ['userDelete', 'a', 'rest'],
      ['userRestore', 'b', 'rest'],
      ['userDelete', 'b', 'rest'],
      ['userDelete', 'a', 'rest'],
    ];
    const failures: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const start = round % 4 < 2 ? 'live' : 'deleted';
      const { user } = await buildUser(app);
      if (start === 'deleted') await sql(app, 'update users set deleted_at = now() where id = ?', [user.id]);
      const answers = await fireAll(round, sent.map(([op, where, surface]) => () => sendUserOp(on[at(round, where)], admin, surface, op, user.id)));
      const failure = unexplained(`round ${round}`, start, sent.map(([op]) => USER_MODELS[op]), { answers, final: await userState(app, user.id) });
      if (failure) failures.push(failure);
    }
    expect(failures).toEqual([]);
  });
});

describe('the trash purged on one instance while the other restores', () => {
  it('DELETE /trash vs restores (REST): the count is exactly the posts gone, each restore agrees with its row', async () => {
    const PER_BATCH = 4;
    const said = (n: number) => `200 Permanently deleted ${n} ${n === 1 ? 'post' : 'posts'}`;
    const failures: string[] = [];
    for (let batch = 0; batch < ROUNDS; batch++) {
      await sql(app, 'delete from posts where deleted_at is not null');
      const posts = await Promise.all(Array.from({ length: PER_BATCH }, () => makePost(app, author, 'trashed')));
      const purge = async () => restAnswer(await on[at(batch, 'a')].rest('DELETE', '/trash', { token: admin }));
      const restores = posts.map((p) => () => sendPostOp(on[at(batch, 'b')], mod, 'rest', 'trashRestore', p.id));
      const answers = await fireAll(batch, [purge, ...restores]);
      const final = await Promise.all(posts.map((p) => postState(app, p.id)));
      const models = [sweepModel(said), ...posts.map((_, i) => batchRestoreModel(i))];
      const failure = unexplained(`batch ${batch}`, posts.map(() => 'trashed'), models, { answers, final });
      if (failure) failures.push(failure);
    }
    expect(failures).toEqual([]);
  });
});
