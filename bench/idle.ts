import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded';
import { BENCH_JWT_SECRET } from './config';
import { caughtUp, startStandby } from './standby';
import { startTarget } from './processes';

/**
 * What an idle instance costs the primary (CONTRACT 18, docs/deploy.md): transactions committed
 * or rolled back in the service's database, from the primary's own pg_stat_database, over an
 * idle period (idleRate). Run: `node dist/bench/idle.js [dist=dist] [seconds=60] [workers=1,4]`:
 * a primary and a streaming standby (embedded PostgreSQL), an instance of `<dist>/src/main.js`
 * per worker count with the standby as DATABASE_REPLICA_URLS, no traffic at all.
 */

/** Transactions committed or rolled back in `database` so far, per the server's statistics. */
export async function transactionsIn(admin: Client, database: string): Promise<number> {
  // Statistics are read from a snapshot that lives until the transaction ends; outside one, each read is fresh.
  await admin.query('select pg_stat_clear_snapshot()');
  const { rows } = await admin.query<{ n: string }>('select xact_commit + xact_rollback as n from pg_stat_database where datname = $1', [database]);
  return Number(rows[0]?.n ?? 0);
}

/** A service started for a measurement; `stop()` resolves once its processes have exited. */
export interface Running {
  stop(): Promise<void>;
}

/**
 * Transactions a second that an idle service costs `database`, from the server's pg_stat_database
 * (read over a connection to another database, `admin`, so the reads are not counted).
 *
 * Why not simply two reads some seconds apart: a backend reports its transaction counts only
 * together with other statistics it has pending (a table it read, I/O), or when its session
 * ends. A connection that only ever runs `select pg_current_wal_lsn()` or `listen` reports
 * nothing for as long as it lives, so two reads would not see it. Each measurement therefore
 * counts whole lives: the service is started, left idle, stopped (its sessions end and report
 * everything), once for `settleMs` and once for `settleMs + idleMs`; the difference is what the
 * `idleMs` of idleness cost, the start and the stop cancelling out.
 */
export async function idleRate(admin: Client, database: string, start: () => Promise<Running>, o: { settleMs: number; idleMs: number }): Promise<{ transactions: number; perSecond: number; startAndStop: number }> {
  const life = async (ms: number) => {
    const before = await transactionsIn(admin, database);
    const running = await start();
    await new Promise((r) => setTimeout(r, ms));
    await running.stop();
    // Sessions report on exit; the server has them a moment after the client saw the socket close.
    await new Promise((r) => setTimeout(r, 1_000));
    return (await transactionsIn(admin, database)) - before;
  };
  const short = await life(o.settleMs);
  const long = await life(o.settleMs + o.idleMs);
  const transactions = long - short;
  return { transactions, perSecond: transactions / (o.idleMs / 1000), startAndStop: short };
}

async function main(): Promise<void> {
  const dist = resolve(process.argv[2] ?? 'dist');
  const seconds = Number(process.argv[3] ?? 60);
  const counts = (process.argv[4] ?? '1,4').split(',').map(Number);
  const log = (m: string) => process.stderr.write(`[idle] ${m}\n`);
  const dir = mkdtempSync(join(tmpdir(), 'blog-api-idle-'));
  chmodSync(dir, 0o755);
  const primary = await startEmbeddedPostgres({ dataDir: join(dir, 'primary') });
  const standby = await startStandby(primary, join(dir, 'standby'));
  const admin = new Client({ connectionString: primary.url });
  await admin.connect();
  try {
    const lines: string[] = [];
    for (const workers of counts) {
      const database = `idle_${workers}_${process.pid}`;
      await admin.query(`create database ${database}`);
      const withDb = (url: string) => Object.assign(new URL(url), { pathname: `/${database}` }).toString();
      await caughtUp(primary.url, standby.url, 30_000, 50);
      const start = async (): Promise<Running> => {
        const t = await startTarget('service', join(dist, 'src', 'main.js'), {
          DATABASE_URL: withDb(primary.url), DATABASE_REPLICA_URLS: withDb(standby.url), WEB_CONCURRENCY: String(workers),
          NODE_ENV: 'production', JWT_SECRET: BENCH_JWT_SECRET, SMTP_URL: 'smtp://127.0.0.1:1', APP_URL: 'http://bench.invalid', LOG_LEVEL: 'warn',
        });
        return { stop: () => t.stop() };
      };
      const r = await idleRate(admin, database, start, { settleMs: 5_000, idleMs: seconds * 1000 });
      log(`WEB_CONCURRENCY=${workers}: ${r.transactions} transactions in ${seconds} s idle = ${r.perSecond.toFixed(2)}/s (start and stop: ${r.startAndStop})`);
      lines.push(`| ${workers} | ${r.transactions} in ${seconds} s | ${r.perSecond.toFixed(2)} |`);
    }
    process.stdout.write(['| WEB_CONCURRENCY | transactions on the primary | per second |', '|---:|---:|---:|', ...lines].join('\n') + '\n');
  } finally {
    await admin.end();
    await standby.stop();
    await primary.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`idle failed: ${(err as Error)?.stack ?? err}\n`);
    process.exit(1);
  });
}
