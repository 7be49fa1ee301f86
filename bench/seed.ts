import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import bcrypt from 'bcrypt';
import { Client } from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../src/db/embedded';
import { initOrm, migrate } from '../src/db/orm';
import { BENCH_PASSWORD, BENCH_TENANTS, TRASH_EVERY, benchConfig } from './config';

export interface SeededDatabase {
  /** URL of the seeded database (service and reference both use it). */
  url: string;
  /** Whether pg_stat_statements is loaded (SQL per request is counted from it). */
  statements: boolean;
  close(): Promise<void>;
}

export interface SeedCounts {
  users: number;
  posts: number;
  comments: number;
  tenantPosts?: number;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function sql<T>(url: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * The embedded cluster, restarted once with pg_stat_statements preloaded (the service's own
 * start has no flag for it, and ALTER SYSTEM survives the restart).
 */
async function embeddedWithStatements(log: (m: string) => void): Promise<{ pg: EmbeddedPostgres; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'blog-bench-'));
  chmodSync(dir, 0o755); // the postgres user must traverse it when we run as root
  let pg = await startEmbeddedPostgres({ dataDir: dir, log });
  await sql(pg.url, (c) => c.query(`alter system set shared_preload_libraries = 'pg_stat_statements'`));
  await pg.stop();
  pg = await startEmbeddedPostgres({ dataDir: dir, log });
  return { pg, dir };
}

/** Users, posts and comments with set-based SQL: a few seconds for the default sizes. */
export async function fill(c: Client, counts: SeedCounts): Promise<void> {
  // One cost-12 hash shared by every user: hashing 1,000 of them would take minutes.
  const hash = await bcrypt.hash(BENCH_PASSWORD, 12);
  const base = new Date();
  await c.query('begin');
  await c.query(
    `insert into users (id, created_at, updated_at, name, email, password, role, email_verified_at, token_version)
     select i, $2::timestamptz - (($1 - i) * interval '1 hour'), $2::timestamptz - (($1 - i) * interval '1 hour'),
            'User ' || i, 'user' || i || '@bench.test', $3, 'user', $2::timestamptz, 0
     from generate_series(1, $1) i`,
    [counts.users, base, hash],
  );
  // Post i is created 20 minutes after post i-1, so "newest first" is "highest id first";
  // every other post is published, every TRASH_EVERY-th is trashed; slugs are unique by id.
  await c.query(
    `insert into posts (id, created_at, updated_at, user_id, title, slug, body, published, published_at, deleted_at)
     select i, t, t, 1 + (i::bigint * 7919) % $2,
            'Post ' || i || ' on ' || left(md5(i::text), 12),
            'post-' || i || '-on-' || left(md5(i::text), 12),
            repeat(md5(i::text) || ' ', 16),
            i % 2 = 0, case when i % 2 = 0 then t + interval '1 hour' end,
            case when i % $4 = 0 then $3::timestamptz - interval '1 day' end
     from (select i, $3::timestamptz - (($1 - i) * interval '20 minutes') as t from generate_series(1, $1) i) s`,
    [counts.posts, counts.users, base, TRASH_EVERY],
  );
  // Comment j lands on post 1 + (j * 7919) mod posts: with the default sizes exactly 5 per post.
  await c.query(
    `insert into comments (id, created_at, updated_at, post_id, user_id, body)
     select j, t, t, pid, 1 + (j * 31) % $3, 'Comment ' || j || ': ' || repeat(md5(j::text), 3)
     from (select j, 1 + (j::bigint * 7919) % $2 as pid from generate_series(1, $1) j) s,
          lateral (select $4::timestamptz - (($2 - pid) * interval '20 minutes') + ((j % 997) * interval '1 second') as t) tt`,
    [counts.comments, counts.posts, counts.users, base],
  );
  // User 1 administers, user 2 moderates: the admin user list and the trash are measured as them.
  await c.query(`update users set role = case id when 1 then 'admin' else 'moderator' end where id in (1, 2)`);
  // Tenant posts spread evenly over BENCH_TENANTS tenants (GET /tenant/posts answers a tenant's all).
  await c.query(
    `insert into tenant_posts (id, created_at, updated_at, tenant_id, title, body)
     select i, $3::timestamptz - (i * interval '1 minute'), $3::timestamptz - (i * interval '1 minute'), 1 + i % $2,
            'Tenant post ' || i, repeat(md5(i::text) || ' ', 8)
     from generate_series(1, $1) i`,
    [counts.tenantPosts ?? 0, BENCH_TENANTS, base],
  );
  for (const t of ['users', 'posts', 'comments', 'tenant_posts']) {
    await c.query(`select setval(pg_get_serial_sequence('${t}', 'id'), coalesce((select max(id) from ${t}), 1))`);
  }
  await c.query('commit');
  // VACUUM too: sets the visibility map, as autovacuum would have on a live database (index-only counts).
  await c.query('vacuum analyze');
}

/** A scratch database: created, migrated by the service's own migrations, filled, analysed. */
export async function seed(log: (m: string) => void = () => undefined): Promise<SeededDatabase> {
  let embedded: { pg: EmbeddedPostgres; dir: string } | undefined;
  let server = benchConfig.databaseUrl;
  if (!server) {
    embedded = await embeddedWithStatements(log);
    server = embedded.pg.url;
  }
  const name = `bench_${randomBytes(4).toString('hex')}`;
  await sql(server, (c) => c.query(`create database ${name}`));
  const url = withDatabase(server, name);

  const orm = await initOrm({ clientUrl: url });
  try {
    await migrate(orm);
  } finally {
    await orm.close(true);
  }
  const started = Date.now();
  const statements = await sql(url, async (c) => {
    await fill(c, benchConfig);
    try {
      await c.query('create extension if not exists pg_stat_statements');
      await c.query('select pg_stat_statements_reset()');
      return true;
    } catch {
      return false; // an external server without the library preloaded: SQL/req is reported as n/a
    }
  });
  log(`seeded ${benchConfig.users} users, ${benchConfig.posts} posts, ${benchConfig.comments} comments in ${Date.now() - started} ms`);

  return {
    url,
    statements,
    async close() {
      await sql(server, (c) => c.query(`drop database if exists ${name} with (force)`)).catch(() => undefined);
      if (embedded) {
        await embedded.pg.stop();
        rmSync(embedded.dir, { recursive: true, force: true });
      }
    },
  };
}
