import { startTestApp, type TestApp } from './support/harness';
import { buildUser } from './support/factories';
import { buildPost } from './support/blog';
import { numbersOut, shapeKey, StatementShapes } from '../src/core/statement-shapes';
import { runPrepared } from '../src/db/prepared';
import type { EntityManager } from '@mikro-orm/postgresql';
import { closeOrm, initOrm } from '../src/db/orm';
import { Post } from '../src/modules/post/post.entity';

/** Hot reads are built once per shape and replayed with each call's numbers (core/statement-shapes.ts). */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

it('builds a shape once, then replays it with other numbers and gets their rows', async () => {
  const { user: a } = await buildUser(app);
  const { user: b } = await buildUser(app);
  const [pa1, pa2] = [await buildPost(app, a), await buildPost(app, a)];
  const pb = await buildPost(app, b);
  const shapes = new StatementShapes();
  let builds = 0;
  const em = app.orm.em.fork();
  const byAuthor = (author: number, limit: number) => {
    const values: number[] = [];
    const where = { user: author, published: false };
    const key = JSON.stringify(numbersOut(where, values, () => '#'));
    values.push(limit);
    return shapes.rows<{ id: number }>({ em, reader: () => em }, key, values, async (n) => {
      builds++;
      const qb = em.createQueryBuilder(Post, 'p').select('p.id').where(numbersOut(where, [], n) as never).orderBy({ id: 'asc' }).limit(n(1));
      await qb.applyFilters();
      return qb.getKnexQuery().toSQL();
    });
  };
  expect((await byAuthor(a.id, 10)).map((r) => r.id)).toEqual([pa1.id, pa2.id]);
  expect((await byAuthor(b.id, 10)).map((r) => r.id)).toEqual([pb.id]);
  expect((await byAuthor(a.id, 1)).map((r) => r.id)).toEqual([pa1.id]);
  expect(builds).toBe(1);
  // Constants stay part of the shape: `published: false` was not taken for a number.
  expect((await byAuthor(a.id, 10)).length).toBe(2);
});

it('shapeKey takes the numbers in the order numbersOut does (a shape built with one is replayed with the other), writing them #', () => {
  const where = { $and: [{ user: 7, deletedAt: null }, { id: { $lt: 42 } }], published: true, n: [3, { x: 9 }] };
  const a: number[] = [];
  const b: number[] = [];
  const key = shapeKey(where, a);
  numbersOut(where, b, () => '#');
  expect(a).toEqual(b);
  expect(key).toBe('{"$and":[{"user":#,"deletedAt":null},{"id":{"$lt":#}}],"published":true,"n":[#,{"x":#}]}');
  // A string "#" is not a number's place.
  expect(shapeKey({ user: '#' }, [])).not.toBe(shapeKey({ user: 1 }, []));
});

it('numbersOut moves every number, at any depth, and keeps everything else', () => {
  const values: number[] = [];
  const out = numbersOut({ $and: [{ user: 7, deletedAt: null }, { id: { $lt: 42 } }], published: true }, values, (i) => `#${i}`);
  expect(values).toEqual([7, 42]);
  expect(out).toEqual({ $and: [{ user: '#0', deletedAt: null }, { id: { $lt: '#1' } }], published: true });
});

/** Four calls of one shape on `em`, then the named statements of the session `ask` runs in. */
async function preparedAfterFourCalls(em: EntityManager, postId: number, ask: (sql: string) => Promise<unknown[]>) {
  const shapes = new StatementShapes();
  let sql = '';
  const byId = (id: number) =>
    shapes.rows<{ id: number }>({ em, reader: () => em }, 'by-id', [id], async (n) => {
      const qb = em.createQueryBuilder(Post, 'p').select('p.id').where({ id: n(0) });
      await qb.applyFilters();
      return (sql = qb.getKnexQuery().toSQL().toNative().sql), qb.getKnexQuery().toSQL();
    });
  for (const id of [postId, postId + 1_000_000, postId]) await byId(id);
  expect((await byId(postId)).map((r) => r.id)).toEqual([postId]);
  const prepared = await ask(`select name, statement, generic_plans + custom_plans as runs from pg_prepared_statements where not from_sql and statement not like '%pg_prepared_statements%'`);
  return { prepared, sql };
}

it('outside a transaction, runs a shape as one named prepared statement on the statement pool, reused by later calls', async () => {
  const { user } = await buildUser(app);
  const post = await buildPost(app, user);
  // One connection, so the session that prepared the statement is the one asked about it.
  const orm = await initOrm({ clientUrl: app.databaseUrl, poolMax: 1 });
  try {
    const em = orm.em.fork();
    // Asked through the same pool (db/prepared.ts), hence the same session.
    const { prepared, sql } = await preparedAfterFourCalls(em, post.id, (q) => runPrepared(em, { sql: q, bindings: [] }));
    // Prepared once (PostgreSQL's own placeholders), then only executed: four runs of one statement.
    expect(prepared).toEqual([{ name: expect.stringMatching(/^s_[0-9a-f]{24}$/), statement: sql, runs: '4' }]);
  } finally {
    await closeOrm(orm);
  }
});

it('inside a transaction, runs it there as a named prepared statement too (knex passes Raw.options() to pg)', async () => {
  const { user } = await buildUser(app);
  const post = await buildPost(app, user);
  const orm = await initOrm({ clientUrl: app.databaseUrl, poolMax: 2 });
  try {
    await orm.em.fork().transactional(async (tx) => {
      const { prepared, sql } = await preparedAfterFourCalls(tx, post.id, (q) => tx.execute(q));
      expect(prepared).toEqual([{ name: expect.stringMatching(/^s_[0-9a-f]{24}$/), statement: sql, runs: '4' }]);
    });
  } finally {
    await closeOrm(orm);
  }
});
