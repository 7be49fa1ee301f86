import 'reflect-metadata';
import { mkdtempSync, chmodSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config/config';
import { silentLogger } from '../src/core/logger';
import { startEmbeddedPostgres } from '../src/db/embedded';
import { initOrm, migrate } from '../src/db/orm';
import { fill } from './seed';

/**
 * `npm run explain`: EXPLAIN ANALYZE of the statements GET /posts runs in each format, taken from
 * the service itself (its ORM's query log, parameters written in) while it answers real requests
 * over a scratch table of EXPLAIN_POSTS posts (default 100,000; 5 comments each, every 20th
 * trashed, half published). Prints, and writes bench/results/explain.md.
 */
const posts = Number(process.env.EXPLAIN_POSTS ?? 100_000);
const RUNS = 5;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'blog-api-explain-'));
  chmodSync(dir, 0o755); // as root PostgreSQL runs as `postgres`, who must reach the cluster
  const pg = await startEmbeddedPostgres({ dataDir: dir });
  const url = pg.url.replace(/\/postgres$/, '/explain');
  const admin = new Client({ connectionString: pg.url });
  await admin.connect();
  await admin.query('create database explain');
  await admin.end();
  const log: string[] = [];
  const orm = await initOrm({ clientUrl: url, inlineParams: true, onQuery: (line) => log.push(line) });
  const db = new Client({ connectionString: url });
  try {
    await migrate(orm);
    await db.connect();
    process.stderr.write(`seeding ${posts} posts...\n`);
    await fill(db, { users: 1000, posts, comments: posts * 5 });
    await db.query('vacuum analyze');

    const config = loadConfig({ NODE_ENV: 'test', JWT_SECRET: 'explain-secret-explain-secret-explain-secret', DATABASE_URL: url, LOG_LEVEL: 'silent', AUTH_RATE_LIMIT_PER_MINUTE: '0' });
    const built = await createApp({ config: { ...config, jwtSecret: config.jwtSecret! }, orm, log: silentLogger });
    const server = built.listen(0, '127.0.0.1', () => undefined);
    await new Promise((r) => server.once('listening', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const get = async (path: string) => {
      log.length = 0;
      const body = (await (await fetch(base + path)).json()) as Record<string, unknown>;
      return { body, statements: log.map((l) => l.replace(/^\[query\] /, '').replace(/ \[took [^\]]*\]$/, '')) };
    };

    const lastPage = Math.ceil((posts - Math.floor(posts / 20)) / 10);
    const first = await get('/posts?paginate=cursor');
    const later = await get(`/posts?paginate=cursor&cursor=${first.body.nextCursor}`);
    const cases: [string, string[]][] = [
      ['page, page 1', (await get('/posts?page=1')).statements],
      [`page, page ${Math.floor(lastPage / 2)} (middle)`, (await get(`/posts?page=${Math.floor(lastPage / 2)}`)).statements],
      [`page, page ${lastPage} (last)`, (await get(`/posts?page=${lastPage}`)).statements],
      ['page, published=true&author=7', (await get('/posts?published=true&author=7')).statements],
      ['simple, page 1', (await get('/posts?paginate=simple&page=1')).statements],
      [`simple, page ${lastPage} (last)`, (await get(`/posts?paginate=simple&page=${lastPage}`)).statements],
      ['cursor, first slice', first.statements],
      ['cursor, a later slice', later.statements],
    ];
    const out: string[] = [`# EXPLAIN ANALYZE of GET /posts (${posts} posts, ${posts * 5} comments; median of ${RUNS} runs)\n`];
    for (const [label, statements] of cases) {
      out.push(`## ${label}\n`);
      for (const sql of statements) {
        const times: number[] = [];
        let plan: string[] = [];
        for (let i = 0; i < RUNS; i++) {
          const { rows } = await db.query(`explain (analyze, timing off, summary on) ${sql}`);
          plan = rows.map((r: Record<string, string>) => r['QUERY PLAN']);
          times.push(Number(/Execution Time: ([\d.]+)/.exec(plan.join('\n'))?.[1]));
        }
        times.sort((a, b) => a - b);
        const nodes = plan.filter((l) => /Scan|Join|Nested|Limit|Sort|Aggregate|InitPlan|Memoize/.test(l)).map((l) => l.replace(/\s+\(cost=[^)]*\)/, '').replace(/ \(actual[^)]*\)/, ''));
        out.push('```sql', sql, '```', `execution ${times[Math.floor(RUNS / 2)].toFixed(2)} ms; plan:`, '```', ...nodes, '```\n');
      }
    }
    const text = out.join('\n');
    process.stdout.write(text + '\n');
    const results = join(__dirname, '..', '..', 'bench', 'results');
    mkdirSync(results, { recursive: true });
    writeFileSync(join(results, 'explain.md'), text);
    server.close();
    await built.close();
  } finally {
    await db.end().catch(() => undefined);
    await orm.close(true);
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
