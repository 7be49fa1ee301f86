import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { closeOrm, initOrm, migrateDatabase } from '../src/db/orm';
import { cachedStatement, param, runStatement, statementOf } from '../src/db/statements';
import { namedStatementsOf, statementName, type FallbackReason } from '../src/db/named-statements';
import { Client } from 'pg';
import { postJson, postJsonSource, POST_LIST_ORDER, POSTS_PER_PAGE } from '../src/modules/post/post.repository';
import { readContextOf } from '../src/core/context';
import { Post } from '../src/modules/post/post.entity';
import { createTestDatabase } from './support/harness';

/**
 * Named statements (src/db/named-statements.ts): a cached statement runs named outside a
 * transaction, under the hash of its text, on the ORM's own pool; a failure of the name itself
 * (missing on the connection, a plan a migration invalidated) is answered by the statement run
 * unnamed, with a warning and a counted fallback, never an error or another row. An ORM of one
 * connection, so that connection's pg_prepared_statements is what the statements left there.
 */
let url: string;
let orm: MikroORM;
const warnings: string[] = [];
const fallbacks: FallbackReason[] = [];
let postId: number;

beforeAll(async () => {
  url = await createTestDatabase();
  await migrateDatabase(url);
  orm = await initOrm({ clientUrl: url, poolMax: 1, onDriverWarning: (m) => warnings.push(m) });
  namedStatementsOf(orm)!.onFallback((reason) => fallbacks.push(reason));
  const em = orm.em.fork();
  await em.execute(`insert into users (name, email, password, role, created_at, updated_at) values ('N', 'named@example.test', 'x', 'user', now(), now())`);
  [{ id: postId }] = await em.execute<{ id: number }[]>(
    `insert into posts (user_id, title, slug, body, published, created_at, updated_at) select id, 'Named', 'named', 'B', false, now(), now() from users returning id`,
  );
});
afterAll(() => closeOrm(orm));

const prepared = async () => (await orm.em.fork().execute<{ name: string; statement: string }[]>('select name, statement from pg_prepared_statements order by prepare_time'));

/** One post's title by id, as a cached statement (its text's type: the column's). */
const titleById = (id: number) =>
  cachedStatement(orm.em.fork(), 'named test: title by id', [id], async (em) => statementOf(em.createQueryBuilder(Post, 'p').select(['p.id', 'p.title']).where({ id: param(0) } as never)));

beforeEach(() => {
  warnings.length = 0;
  fallbacks.length = 0;
});

it('a cached statement runs named, under the hash of its text, prepared once on the connection', async () => {
  const statement = await titleById(postId);
  expect(statement.name).toBe(statementName(statement.text!));
  expect(statement.name).toMatch(/^s_[0-9a-f]{20}$/);
  for (let i = 0; i < 3; i++) expect(await runStatement(orm.em.fork(), await titleById(postId))).toEqual([{ id: postId, title: 'Named' }]);
  expect((await prepared()).filter((p) => p.name === statement.name)).toEqual([{ name: statement.name, statement: statement.text }]);
  // The REST answer of one post, as GET /posts/:id reads it, runs named too.
  const json = await postJson(readContextOf(orm.em.fork()), postId);
  expect(JSON.parse(json!)).toMatchObject({ id: postId, title: 'Named' });
  expect((await prepared()).length).toBe(2);
  expect({ warnings, fallbacks }).toEqual({ warnings: [], fallbacks: [] });
});

it('in a transaction it runs unnamed, on the transaction\'s connection', async () => {
  const slugById = (em: EntityManager) =>
    cachedStatement(em, 'named test: slug by id', [postId], async (em) => statementOf(em.createQueryBuilder(Post, 'p').select(['p.slug']).where({ id: param(0) } as never)));
  const before = await prepared();
  await orm.em.fork().transactional(async (tx) => {
    expect(await runStatement(tx, await slugById(tx))).toEqual([{ slug: 'named' }]);
  });
  expect(await prepared()).toEqual(before);
  // The control: outside the transaction the same statement is prepared.
  expect(await runStatement(orm.em.fork(), await slugById(orm.em.fork()))).toEqual([{ slug: 'named' }]);
  expect((await prepared()).length).toBe(before.length + 1);
});

it('a name the connection lost (DEALLOCATE ALL under it): the same answer, run unnamed, logged and counted; then prepared again', async () => {
  const statement = await titleById(postId);
  expect(await runStatement(orm.em.fork(), statement)).toEqual([{ id: postId, title: 'Named' }]);
  // pg's client still takes it as parsed on this connection: the next run sends only Bind.
  await orm.em.fork().execute('deallocate all');
  expect(await runStatement(orm.em.fork(), statement)).toEqual([{ id: postId, title: 'Named' }]);
  expect(fallbacks).toEqual(['missing']);
  expect(warnings).toEqual([expect.stringMatching(new RegExp(`^named statement ${statement.name} missing \\(.*does not exist\\): run unnamed$`))]);
  // The pool dropped that connection: the next run prepares on a new one.
  expect(await runStatement(orm.em.fork(), statement)).toEqual([{ id: postId, title: 'Named' }]);
  expect((await prepared()).map((p) => p.name)).toEqual([statement.name]);
  expect(fallbacks).toEqual(['missing']);
});

it('a column-type migration under a live instance: the plan it invalidated runs unnamed, with the new type, no error', async () => {
  const live = await initOrm({ clientUrl: url, poolMax: 1, onDriverWarning: (m) => warnings.push(m) });
  namedStatementsOf(live)!.onFallback((reason) => fallbacks.push(reason));
  const read = async () => runStatement(live.em.fork(), await titleById(postId));
  try {
    expect(await read()).toEqual([{ id: postId, title: 'Named' }]);
    await orm.em.fork().execute('alter table posts alter column title type text');
    expect(await read()).toEqual([{ id: postId, title: 'Named' }]);
    expect(fallbacks).toEqual(['invalidated']);
    expect(warnings).toEqual([expect.stringMatching(/ invalidated \(cached plan must not change result type\): run unnamed$/)]);
    expect(await read()).toEqual([{ id: postId, title: 'Named' }]);
    expect(fallbacks).toEqual(['invalidated']);
  } finally {
    await closeOrm(live);
    await orm.em.fork().execute('alter table posts alter column title type varchar(255)');
  }
});

/**
 * A page's LIMIT (the page size, part of the statement's shape) is in the text, the offset a
 * parameter: PostgreSQL then plans the page once for every offset (its generic plan) instead of
 * at every run, which for a page of posts costs more than running it. The control: the same text
 * with the LIMIT as a parameter is planned again at every run, since for an unknown LIMIT the
 * planner assumes a tenth of the table.
 */
it('a page of posts is planned once for every page: its page size is in the text, the offset a parameter', async () => {
  await orm.em.fork().execute(
    `insert into posts (user_id, title, slug, body, published, created_at, updated_at)
     select (select min(id) from users), 'Page ' || g, 'page-' || g, 'B', true, now() - g * interval '1 minute', now() from generate_series(1, 2000) g`,
  );
  await orm.em.fork().execute('analyze posts');
  const page = (offset: number) => postJsonSource(readContextOf(orm.em.fork())).slice({}, { orderBy: POST_LIST_ORDER, limit: POSTS_PER_PAGE, offset });
  for (let i = 0; i < 8; i++) expect((await page(i * 100)).rows).toHaveLength(POSTS_PER_PAGE);
  const plans = await orm.em.fork().execute<{ statement: string; generic_plans: string; custom_plans: string }[]>(
    `select statement, generic_plans, custom_plans from pg_prepared_statements where statement like '%from "posts" as "s"%offset $1%'`,
  );
  expect(plans).toHaveLength(1);
  expect(plans[0].statement).toContain(`limit ${POSTS_PER_PAGE} offset $1`);
  expect(Number(plans[0].generic_plans)).toBeGreaterThan(0);

  const control = new Client({ connectionString: url });
  await control.connect();
  try {
    const text = plans[0].statement.replace(`limit ${POSTS_PER_PAGE} offset $1`, 'limit $2 offset $1');
    for (let i = 0; i < 8; i++) await control.query({ name: 'limit_as_parameter', text, values: [i * 100, POSTS_PER_PAGE] });
    const [{ generic_plans, custom_plans }] = (await control.query(`select generic_plans, custom_plans from pg_prepared_statements where name = 'limit_as_parameter'`)).rows;
    expect({ generic_plans: Number(generic_plans), custom_plans: Number(custom_plans) }).toEqual({ generic_plans: 0, custom_plans: 8 });
  } finally {
    await control.end();
  }
});

it("a post's detail is one flat statement: no subquery scan and no sort of its row, only of its comments", async () => {
  expect(await postJson(readContextOf(orm.em.fork()), postId)).toContain('"title":"Named"');
  const [detail] = (await prepared()).filter((p) => p.statement.includes('"p"."id" = $1') && p.statement.includes('::text as json'));
  expect(detail).toBeDefined();
  const nodes = async (text: string) => {
    const plan = await orm.em.fork().execute<{ 'QUERY PLAN': string }[]>(`explain (generic_plan, costs off) ${text}`);
    return plan.map((line) => line['QUERY PLAN'].trim()).filter((line) => /^(->\s*)?Subquery Scan|Sort Key:/.test(line));
  };
  expect(await nodes(detail.statement)).toEqual(['Sort Key: c.created_at, c.id']);
  // The control: the same row wrapped as a list wraps its rows, and ordered there, is copied
  // through a subquery scan and sorted again.
  expect(await nodes(`select x.id, x.json || '' from (${detail.statement}) x order by x.id`)).toEqual(['Sort Key: x.id', '->  Subquery Scan on x', 'Sort Key: c.created_at, c.id']);
});
