import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { Client } from 'pg';
import { BENCH_JWT_SECRET, BENCH_PASSWORD, userEmail } from './config';
import { call } from './http';
import { cpuTicks, distPath, postgresTicks, procStat, startTarget, TICK_MS, waitIdle, type Target } from './processes';
import { writesLines, type WritesResult } from './results-render';
import { seed } from './seed';

/**
 * The cost of Idempotency-Key on writes: part of `npm run bench` (`--only writes`), and alone as
 * `node dist/bench/idempotency.js` (after the build). One service on the bench's seeded database;
 * the write mix (2 comments to 1 post, bearer tokens) sent without a key and with a fresh key per
 * request, in paired rounds whose order rotates, so a busy neighbour on a shared machine hits both
 * alike. Reports req/s, CPU per request (the service's and PostgreSQL's) and the keyed/plain ratio
 * of time per request as a paired median (each round's ratio, then the median).
 * Knobs: IDEM_ROUNDS (5: writes grow the tables as they run, so a pair's two runs see less alike
 * databases than two reads do, and single rounds spread from 0.87x to 1.23x), IDEM_SECONDS (6),
 * IDEM_CONNECTIONS (10).
 */
const rounds = Number(process.env.IDEM_ROUNDS ?? 5);
const seconds = Number(process.env.IDEM_SECONDS ?? 6);
const connections = Number(process.env.IDEM_CONNECTIONS ?? 10);
/** The issue's bound on what a key may cost the write mix. */
const WRITE_KEY_GOAL = 1.15;

interface Run { rps: number; nodeMs: number; pgMs: number; errors: number }

export interface WriteKeyFigures {
  plain: Run[];
  keyed: Run[];
  /** Time per request keyed / plain: each round's ratio, then the median. */
  ratio: number;
}

function writeMix(tokens: string[], postIds: number[], keyed: boolean) {
  let n = 0;
  return () => {
    const token = tokens[n % tokens.length];
    const headers: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    if (keyed) headers['idempotency-key'] = `bench-${process.pid}-${++n}-${randomBytes(4).toString('hex')}`;
    else n++;
    if (n % 3 === 0) return { method: 'POST' as const, path: '/posts', headers, body: JSON.stringify({ title: `Idem bench ${process.pid}-${n}-${randomBytes(3).toString('hex')}`, body: 'Written under load. '.repeat(20) }) };
    return { method: 'POST' as const, path: `/posts/${postIds[n % postIds.length]}/comments`, headers, body: JSON.stringify({ body: 'A comment written under load.' }) };
  };
}

async function run(t: Target, next: () => object, postmaster: number, duration: number): Promise<Run> {
  await waitIdle([t.pid], 10_000);
  const n0 = cpuTicks(t.pid);
  const p0 = postgresTicks(postmaster);
  const r = await autocannon({ url: t.url, connections, duration, timeout: 30, requests: [{ setupRequest: (req) => ({ ...req, ...next() }) }] });
  const responses = r.requests.total || 1;
  return { rps: responses / r.duration, nodeMs: ((cpuTicks(t.pid) - n0) * TICK_MS) / responses, pgMs: ((postgresTicks(postmaster) - p0) * TICK_MS) / responses, errors: r.non2xx + r.errors };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** PostgreSQL's postmaster, whose processes' CPU is counted (/proc), found through a backend of `url`. */
export async function postmasterOf(url: string): Promise<number> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const backend = (await c.query('select pg_backend_pid() as pid')).rows[0].pid as number;
    return Number(procStat(backend)![1]);
  } finally {
    await c.end();
  }
}

/**
 * The write mix on `t` (a service on the seeded database at `url`), without and with a key. It
 * writes: `npm run bench` runs it after every read scenario.
 */
export async function runWriteKeys(t: Target, url: string, postmaster: number, log: (m: string) => void): Promise<WriteKeyFigures> {
  const c = new Client({ connectionString: url });
  await c.connect();
  const postIds = (await c.query('select id from posts where deleted_at is null order by id limit 200')).rows.map((r) => r.id as number);
  await c.end();
  const tokens = await Promise.all([1, 2, 3, 4].map(async (i) => {
    const res = await call(t.url, 'POST', '/auth/login', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: userEmail(i), password: BENCH_PASSWORD }) });
    if (typeof res.body?.token !== 'string') throw new Error(`login of ${userEmail(i)}: ${res.status}`);
    return res.body.token as string;
  }));
  const mixes = { plain: writeMix(tokens, postIds, false), keyed: writeMix(tokens, postIds, true) };
  const results: Record<'plain' | 'keyed', Run[]> = { plain: [], keyed: [] };
  for (const name of ['plain', 'keyed'] as const) await run(t, mixes[name], postmaster, 2);
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 ? (['keyed', 'plain'] as const) : (['plain', 'keyed'] as const)) {
      const r = await run(t, mixes[name], postmaster, seconds);
      results[name].push(r);
      log(`write mix ${name} [${round + 1}/${rounds}]: ${r.rps.toFixed(0)} req/s, node ${r.nodeMs.toFixed(2)} ms/req, pg ${r.pgMs.toFixed(2)} ms/req${r.errors ? `, ${r.errors} errors` : ''}`);
    }
  }
  return { ...results, ratio: median(results.plain.map((p, i) => p.rps / results.keyed[i].rps)) };
}

/** The figures as bench/results/latest.json holds them (bench/results-render.ts writesLines renders them). */
export function writeKeysResult(f: WriteKeyFigures): WritesResult {
  const side = (rs: Run[]) => ({
    reqPerSec: median(rs.map((r) => r.rps)),
    nodeCpuMsPerReq: median(rs.map((r) => r.nodeMs)),
    pgCpuMsPerReq: median(rs.map((r) => r.pgMs)),
    errors: rs.reduce((a, r) => a + r.errors, 0),
    runs: rs,
  });
  return {
    seconds, connections, plain: side(f.plain), keyed: side(f.keyed),
    ratio: f.ratio, ratioByRound: f.plain.map((p, i) => p.rps / f.keyed[i].rps), goal: WRITE_KEY_GOAL, pass: f.ratio <= WRITE_KEY_GOAL,
  };
}

async function main(): Promise<void> {
  const log = (m: string) => process.stderr.write(`[idempotency ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
  const db = await seed(log);
  const t = await startTarget('service', distPath('src', 'main.js'), {
    DATABASE_URL: db.url, JWT_SECRET: BENCH_JWT_SECRET, NODE_ENV: 'production', SMTP_URL: 'smtp://127.0.0.1:1',
    APP_URL: 'http://bench.invalid', AUTH_RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn', TRASH_RETENTION_DAYS: '0',
  });
  try {
    const f = await runWriteKeys(t, db.url, await postmasterOf(db.url), log);
    process.stdout.write(writesLines(writeKeysResult(f)).join('\n') + '\n');
  } finally {
    await t.stop();
    await db.close();
  }
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`idempotency bench failed: ${(err as Error)?.stack ?? err}\n`);
    process.exit(1);
  });
}
