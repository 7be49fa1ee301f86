import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import type { Running } from '../bench/idle';
import { followStart } from './support/follow-start';
import { idleRateSideBySide } from './support/idle';
import { caughtUp, startStreamingPair, type StreamingPair } from './support/replica';
import { builtService } from './support/service-build';
import { settled, until } from './support/wait';

/**
 * A quiet primary (CONTRACT 18): what an idle instance asks of the primary does not grow with
 * WEB_CONCURRENCY. Real service processes (the run's build of `npm start`'s dist/src/main.js) on a
 * real primary with a streaming standby as DATABASE_REPLICA_URLS; the transactions are the
 * primary's own count (pg_stat_database), over whole lives of the service (bench/idle.ts idleRate
 * says why; test/support/idle.ts lives them side by side). The rest of CONTRACT 18 that needs
 * several workers: test/quiet-primary.test.ts.
 */
jest.setTimeout(400_000);

let pair: StreamingPair;
let admin: Client;
let root: string;
let scratch: string;
const databases = (workers: number) => ({ short: `quiet_${workers}s_${process.pid}`, long: `quiet_${workers}l_${process.pid}` });

beforeAll(async () => {
  root = builtService();
  scratch = mkdtempSync(join(tmpdir(), 'blog-api-quiet-'));
  pair = await startStreamingPair();
  admin = new Client({ connectionString: pair.primaryUrl });
  await admin.connect();
  for (const workers of [1, 4]) for (const name of Object.values(databases(workers))) await admin.query(`create database ${name}`);
  await caughtUp(pair.primaryUrl, pair.standbyUrl);
});
afterAll(async () => {
  await admin?.end();
  await pair?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** The service with `workers` workers on `database` (the standby its replica), once every worker listens; stopping it expects exit 0. */
async function started(workers: number, database: string): Promise<Running> {
  const child = spawn(process.execPath, [join(root, 'dist', 'src', 'main.js')], {
    env: {
      ...process.env,
      NODE_ENV: 'development',
      PORT: '0',
      LOG_LEVEL: 'info',
      DATA_DIR: mkdtempSync(join(scratch, 'data-')),
      JWT_SECRET: '',
      DATABASE_URL: pair.withDatabase(pair.primaryUrl, database),
      DATABASE_REPLICA_URLS: pair.withDatabase(pair.standbyUrl, database),
      WEB_CONCURRENCY: String(workers),
      METRICS_TOKEN: 'quiet-primary-metrics-token',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const s = followStart(child);
  await s.ready;
  if (workers > 1) await until(() => s.output().includes(`"msg":"${workers} workers listening"`), 'every worker');
  return {
    async stop() {
      child.kill('SIGTERM');
      // The service's own last lines with the exit, so a failed shutdown says why.
      const exit = await settled(exited, 'the service to exit on SIGTERM', 30_000);
      expect({ exit, output: exit.code === 0 ? '' : s.output().slice(-4000) }).toEqual({ exit: { code: 0, signal: null }, output: '' });
    },
  };
}

it('an idle instance costs the primary at most 2 transactions a second, the same with 1 and 4 workers', async () => {
  // Both worker counts at once too: each pair of lives on databases of its own.
  const [one, four] = await Promise.all([1, 4].map((workers) => idleRateSideBySide(admin, databases(workers), (database) => started(workers, database), { settleMs: 3_000, idleMs: 20_000 })));
  const rates: Record<number, number> = { 1: one.perSecond, 4: four.perSecond };
  for (const [workers, r] of [[1, one], [4, four]] as const) {
    process.stderr.write(`[quiet-primary] WEB_CONCURRENCY=${workers}: ${r.transactions} transactions in 20 s idle = ${r.perSecond.toFixed(2)}/s (start and stop: ${r.startAndStop})\n`);
  }
  expect(rates[1]).toBeLessThanOrEqual(2);
  expect(rates[4]).toBeLessThanOrEqual(2);
  // Not growing with the workers: within half a transaction a second (the count's own noise).
  expect(Math.abs(rates[4] - rates[1])).toBeLessThanOrEqual(0.5);
});
