import { startTestApp, type TestApp } from './support/harness';
import { buildUser } from './support/factories';
import { buildPost } from './support/blog';
import { numbersOut, StatementShapes } from '../src/core/statement-shapes';
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

it('numbersOut moves every number, at any depth, and keeps everything else', () => {
  const values: number[] = [];
  const out = numbersOut({ $and: [{ user: 7, deletedAt: null }, { id: { $lt: 42 } }], published: true }, values, (i) => `#${i}`);
  expect(values).toEqual([7, 42]);
  expect(out).toEqual({ $and: [{ user: '#0', deletedAt: null }, { id: { $lt: '#1' } }], published: true });
});
