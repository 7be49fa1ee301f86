/**
 * Measurement, not a test: `npx jest --testMatch '<rootDir>/test/explain.scratch.ts' --testTimeout 600000`
 * builds 100,000 posts (1,000 authors, ~5% trashed, ~half published, 3 comments on every 10th
 * post) in a scratch database and writes EXPLAIN ANALYZE of every list statement to
 * /tmp/explain-lists.txt.
 */
import { writeFileSync } from 'node:fs';
import { startTestApp } from './support/harness';

it('EXPLAIN ANALYZE of the list statements over 100,000 posts', async () => {
  const app = await startTestApp();
  const knex = app.orm.em.getConnection().getKnex();
  await knex.raw(`insert into users (created_at, updated_at, name, email, password) select now(), now(), 'u' || g, 'u' || g || '@x.test', 'x' from generate_series(1, 1000) g`);
  await knex.raw(`insert into posts (created_at, updated_at, user_id, title, slug, body, published, published_at, deleted_at)
    select now() - g * interval '1 minute', now(), 1 + g % 1000, 'Title ' || g, 'slug-' || g, 'Body', g % 2 = 0,
      case when g % 2 = 0 then now() end, case when g % 20 = 0 then now() - (g % 97) * interval '1 hour' end
    from generate_series(1, 100000) g`);
  await knex.raw(`insert into comments (created_at, updated_at, post_id, user_id, body) select now(), now(), p.id, 1 + (p.id + k) % 1000, 'c' from posts p, generate_series(1, 3) k where p.id % 10 = 0`);
  await knex.raw('analyze');
  const queries: [string, string][] = [
    ['page 1: posts', `select p0.* from posts as p0 where p0.deleted_at is null order by p0.created_at desc, p0.id desc limit 10`],
    ['page 500: posts (offset 4990)', `select p0.* from posts as p0 where p0.deleted_at is null order by p0.created_at desc, p0.id desc limit 10 offset 4990`],
    ['page: count', `select count(*) as count from posts as p0 where p0.deleted_at is null`],
    ['published=true page 1', `select p0.* from posts as p0 where p0.deleted_at is null and p0.published = true and p0.published_at is not null order by p0.created_at desc, p0.id desc limit 10`],
    ['published=true count', `select count(*) from posts as p0 where p0.deleted_at is null and p0.published = true and p0.published_at is not null`],
    ['author=7 page 1', `select p0.* from posts as p0 where p0.deleted_at is null and p0.user_id = 7 order by p0.created_at desc, p0.id desc limit 10`],
    ['simple page 2 (limit 11 offset 10)', `select p0.* from posts as p0 where p0.deleted_at is null order by p0.created_at desc, p0.id desc limit 11 offset 10`],
    ['cursor first slice', `select p0.* from posts as p0 where p0.deleted_at is null order by p0.id desc limit 11`],
    ['cursor next slice', `select p0.* from posts as p0 where p0.deleted_at is null and p0.id < 50000 order by p0.id desc limit 11`],
    ['cursor probe', `select p0.id from posts as p0 where p0.deleted_at is null and p0.id > 50000 limit 1`],
    ['cursor probe with order by id (suggested)', `select p0.id from posts as p0 where p0.deleted_at is null and p0.id > 50000 order by p0.id asc limit 1`],
    ['post authors', `select u0.* from users as u0 where u0.deleted_at is null and u0.id in (1,2,3,4,5,6,7,8,9,10)`],
    ['comments with authors', `select c0.*, u1.id, u1.name from comments as c0 inner join users as u1 on c0.user_id = u1.id where c0.post_id in (10,20,30,40,50,60,70,80,90,100) order by c0.created_at asc, c0.id asc`],
    ['trash page 1', `select p0.* from posts as p0 where p0.deleted_at is not null order by p0.deleted_at desc, p0.id desc limit 20`],
    ['trash count', `select count(*) from posts as p0 where p0.deleted_at is not null`],
    ['trash cursor next slice', `select p0.* from posts as p0 where p0.deleted_at is not null and p0.id < 50000 order by p0.id desc limit 21`],
    ['retention purge (select part)', `explain_only:delete from posts where deleted_at is not null and deleted_at < now() - make_interval(days => 30)`],
  ];
  const out: string[] = [];
  const run = async (label: string) => {
    for (const [name, q] of queries) {
      const only = q.startsWith('explain_only:');
      const sql = only ? q.slice('explain_only:'.length) : q;
      const res = await knex.raw(`explain (${only ? 'costs' : 'analyze, buffers'}) ${sql}`);
      out.push(`--- [${label}] ${name}\n${sql}\n${res.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n')}\n`);
    }
  };
  await run('initial migration indexes');
  await knex.raw(`create index posts_active_created_at_id_index on posts (created_at, id) where deleted_at is null`);
  await knex.raw(`create index posts_active_id_index on posts (id) where deleted_at is null`);
  await knex.raw(`create index posts_trashed_deleted_at_id_index on posts (deleted_at, id) where deleted_at is not null`);
  await knex.raw('analyze');
  await run('with partial indexes');
  await knex.raw('vacuum analyze posts');
  await run('partial indexes, after vacuum');
  writeFileSync('/tmp/explain-lists.txt', out.join('\n'));
  await app.close();
}, 600_000);
