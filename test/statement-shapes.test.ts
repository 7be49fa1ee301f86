import { startTestApp, type TestApp } from './support/harness';
import { buildUser } from './support/factories';
import { buildPost } from './support/blog';
import { freshTenant, seedTenantPosts } from './support/tenants';
import type { EntityManager } from '@mikro-orm/postgresql';
import { cachedStatement, numbersAsParams, param, runStatement, shapeKey, statementKey, statementOf } from '../src/db/statements';
import { requestFork } from '../src/core/context';
import { Post } from '../src/modules/post/post.entity';
import { TenantPost } from '../src/modules/tenant-post/tenant-post.entity';
import { readTenantPosts, tenantPostViews } from '../src/modules/tenant-post/tenant-post.repository';

/**
 * The one way the service runs its own statements and the one cache of compiled statements
 * (src/db/statements.ts): a builder declares each request value as a parameter where it goes;
 * a statement's key is its shape plus the parameters of every ORM filter of the EntityManager it
 * is built on, so a filter's per-request value (the tenant) is never replayed to another request.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

/** Ids of posts by `author` (a declared parameter), `published` a constant of the shape, `limit` named by the shape. */
function byAuthor(em: EntityManager, builds: { n: number }, shape: string, author: number, limit: number) {
  return cachedStatement(em, `${shape} ${limit}`, [author], async (em) => {
    builds.n++;
    const qb = em.createQueryBuilder(Post, 'p').select('p.id').where({ user: param(0), published: false } as never).orderBy({ id: 'asc' }).limit(limit);
    await qb.applyFilters();
    return statementOf(qb);
  });
}

it('builds a shape once, then runs it with other values and gets their rows; constants stay part of the shape', async () => {
  const { user: a } = await buildUser(app);
  const { user: b } = await buildUser(app);
  const [pa1, pa2] = [await buildPost(app, a), await buildPost(app, a)];
  const pb = await buildPost(app, b);
  await buildPost(app, a, { published: true });
  const em = app.orm.em.fork();
  const builds = { n: 0 };
  const ids = async (author: number, limit = 10) => (await runStatement<{ id: number }>(em, await byAuthor(em, builds, `by-author-${a.id}`, author, limit))).map((r) => r.id);
  expect(await ids(a.id)).toEqual([pa1.id, pa2.id]);
  expect(await ids(b.id)).toEqual([pb.id]);
  expect(builds.n).toBe(1);
  // The limit is named by the shape: another limit is another statement.
  expect(await ids(a.id, 1)).toEqual([pa1.id]);
  expect(builds.n).toBe(2);
});

it('a declared parameter is bound from the values; the built statement keeps the others as they were built', async () => {
  const em = app.orm.em.fork();
  const statement = await byAuthor(em, { n: 0 }, 'declared', 424242, 7);
  // The author is the request's value, false and 7 were the builder's: each is a bound value but
  // the LIMIT, a page size, which is written into the text (PostgreSQL's generic plan needs it:
  // test/named-statements.test.ts).
  expect([...statement.params].sort()).toEqual([424242, false].sort());
  expect(statement.params.every((p) => p === null || typeof p !== 'object')).toBe(true);
  expect(statement.sql).not.toMatch(/424242|\bfalse\b|\$\d|\u0001/);
  expect(statement.sql).toMatch(/ limit 7$/);
  expect(statement.text).toBe(statement.sql.replace(/\?/g, ((n) => () => `$${++n}`)(0)));
  await expect(cachedStatement(em, 'needs a value', [], async () => ({ sql: 'select ?::int', params: [param(0)] }))).rejects.toThrow('no value for parameter 0');
});

it('a declared parameter stays a bound value where MikroORM writes values into the text (a sub-query in the select)', async () => {
  const { user } = await buildUser(app);
  await buildPost(app, user);
  await buildPost(app, user);
  const em = app.orm.em.fork();
  const statement = await cachedStatement(em, 'posts of an author with their count', [user.id], async (em) => {
    const count = em.createQueryBuilder(Post, 'c').count().where({ user: param(0) } as never);
    const qb = em.createQueryBuilder(Post, 'p').select('p.id').where({ user: param(0) } as never).orderBy({ id: 'asc' });
    qb.addSelect(count.as('total'));
    return statementOf(qb);
  });
  expect(statement.params).toEqual([user.id, user.id]);
  expect(statement.sql).not.toContain(String(user.id));
  expect((await runStatement<{ total: string }>(em, statement)).map((r) => Number(r.total))).toEqual([2, 2]);
});

it('shapeKey takes the numbers in the order numbersAsParams declares them, writing them #', () => {
  const where = { $and: [{ user: 7, deletedAt: null }, { id: { $lt: 42 } }], published: true, n: [3, { x: 9 }] };
  const values: unknown[] = [];
  expect(shapeKey(where, values)).toBe('{"$and":[{"user":#,"deletedAt":null},{"id":{"$lt":#}}],"published":true,"n":[#,{"x":#}]}');
  expect(values).toEqual([7, 42, 3, 9]);
  expect(numbersAsParams(where)).toEqual({ $and: [{ user: param(0), deletedAt: null }, { id: { $lt: param(1) } }], published: true, n: [param(2), { x: param(3) }] });
  // A string "#" is not a number's place.
  expect(shapeKey({ user: '#' }, [])).not.toBe(shapeKey({ user: 1 }, []));
});

describe('the key rule: a filter parameter is never replayed across requests', () => {
  it('the key of a shape carries the filter parameters of the EntityManager (none, tenant A, tenant B)', () => {
    const none = statementKey(app.orm.em.fork(), 'shape');
    const a = statementKey(requestFork(app.orm, 1), 'shape');
    const b = statementKey(requestFork(app.orm, 2), 'shape');
    expect(new Set([none, a, b]).size).toBe(3);
    expect(statementKey(requestFork(app.orm, 1), 'shape')).toBe(a);
  });

  it('one shape read by alternating tenants: each request gets its own tenant\'s rows and its own tenant bound', async () => {
    const A = freshTenant();
    const B = freshTenant();
    const [a] = await seedTenantPosts(app, A, 1);
    const [b] = await seedTenantPosts(app, B, 1);
    let builds = 0;
    const read = async (tenant: number) => {
      const em = requestFork(app.orm, tenant);
      const statement = await cachedStatement(em, 'tenant replay test', [], async (em) => {
        builds++;
        const qb = em.createQueryBuilder(TenantPost, 't').select(['t.id', 't.tenantId']).orderBy({ id: 'asc' });
        await qb.applyFilters();
        return statementOf(qb);
      });
      expect(statement.params).toEqual([tenant]);
      return runStatement<{ id: number; tenant_id: number }>(em, statement);
    };
    for (let round = 0; round < 3; round++) {
      expect(await read(A)).toEqual([{ id: a.id, tenant_id: A }]);
      expect(await read(B)).toEqual([{ id: b.id, tenant_id: B }]);
    }
    // Built once per tenant, then reused only by forks carrying that tenant.
    expect(builds).toBe(2);
  });

  it('the tenant posts read (its cached statements) answers each fork with its own tenant only, in any order', async () => {
    const tenants = [freshTenant(), freshTenant(), freshTenant()];
    const seeded = new Map<number, number[]>();
    for (const t of tenants) seeded.set(t, (await seedTenantPosts(app, t, 2)).map((p) => p.id));
    for (const order of [tenants, [...tenants].reverse(), [tenants[1], tenants[0], tenants[2], tenants[1]]]) {
      for (const t of order) {
        const em = requestFork(app.orm, t);
        const rows = await readTenantPosts(em, { name: 'replay', statement: (s) => s, map: (_em, r) => r });
        expect(rows.map((r) => [r.id, r.tenant_id])).toEqual(seeded.get(t)!.map((id) => [id, t]));
        expect((await tenantPostViews(em)).every((p) => p.tenantId === t)).toBe(true);
      }
    }
  });
});

it('runs in the EntityManager\'s transaction: a statement there sees the transaction\'s uncommitted row', async () => {
  const { user } = await buildUser(app);
  const post = await buildPost(app, user);
  await app.orm.em.fork().transactional(async (tx) => {
    await tx.execute('update posts set title = ? where id = ?', ['inside the transaction', post.id]);
    const [row] = await runStatement<{ title: string }>(tx, { sql: 'select title from posts where id = ?', params: [post.id] });
    expect(row.title).toBe('inside the transaction');
    throw Object.assign(new Error('roll back'), { rollback: true });
  }).catch((err) => {
    if (!(err as { rollback?: boolean }).rollback) throw err;
  });
  const [row] = await runStatement<{ title: string }>(app.orm.em.fork(), { sql: 'select title from posts where id = ?', params: [post.id] });
  expect(row.title).not.toBe('inside the transaction');
});

it('a driver error comes back as the ORM\'s exception', async () => {
  await expect(runStatement(app.orm.em.fork(), { sql: 'select * from no_such_table', params: [] })).rejects.toMatchObject({ name: 'TableNotFoundException' });
});
