import { join } from 'node:path';
import autocannon from 'autocannon';
import { Client } from 'pg';
import { BENCH_JWT_SECRET } from './config';
import { cpuTicks, postgresTicks, procStat, sampleRss, startTarget, TICK_MS, waitIdle, type Target } from './processes';
import { requestMakers } from './scenarios';
import { seed } from './seed';
import { withReceiver } from './otlp-receiver';

/**
 * A/B of builds on one seeded database: `node dist/bench/ab.js name=path/to/dist[,node-flags] ...`
 * (e.g. `base=/tmp/base/dist new=dist new-capped=dist,--max-old-space-size=192`). Every target
 * runs every scenario once per round, the order rotating each round, so a busy neighbour on a
 * shared machine hits all of them alike. Besides req/s it reports CPU per request, from /proc
 * before and after each run: the service process's, and PostgreSQL's (its backends and the
 * postmaster's reaped children). CPU per request is far less sensitive to contention than req/s.
 * Knobs: AB_ROUNDS (3), AB_SECONDS (8), AB_WARMUP (3), AB_CONNECTIONS (10), AB_SCENARIOS
 * (list,graphql,show; any key of requestMakers).
 * After the dist, `KEY=value` items are the target's environment, anything else Node flags: the
 * cost of tracing is `off=dist on=dist,OTEL_EXPORTER_OTLP_ENDPOINT=auto,OTEL_TRACES_SAMPLER=always_on`
 * (`auto`: a receiver of its own on loopback, bench/otlp-receiver.ts, that decodes and counts
 * every span in another process).
 */
const rounds = Number(process.env.AB_ROUNDS ?? 3);
const seconds = Number(process.env.AB_SECONDS ?? 8);
const warmup = Number(process.env.AB_WARMUP ?? 3);
const connections = Number(process.env.AB_CONNECTIONS ?? 10);
const scenarioKeys = (process.env.AB_SCENARIOS ?? 'list,graphql,show').split(',').filter(Boolean);
const log = (m: string) => process.stderr.write(`[ab ${new Date().toISOString().slice(11, 19)}] ${m}\n`);

interface Run { rps: number; p50: number; p99: number; nodeMs: number; pgMs: number; rss: number; non2xx: number }

async function run(t: Target, key: string, postmaster: number, duration: number): Promise<Run> {
  const next = requestMakers[key];
  await waitIdle([t.pid], 10_000);
  const n0 = cpuTicks(t.pid);
  const p0 = postgresTicks(postmaster);
  const stopRss = sampleRss(t.pid);
  const r = await autocannon({ url: t.url, connections, duration, timeout: 30, requests: [{ setupRequest: (req) => ({ ...req, ...next() }) }] });
  const rss = stopRss();
  const responses = r.requests.total || 1;
  return {
    rps: responses / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    nodeMs: ((cpuTicks(t.pid) - n0) * TICK_MS) / responses,
    pgMs: ((postgresTicks(postmaster) - p0) * TICK_MS) / responses,
    rss,
    non2xx: r.non2xx + r.errors,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const specs = process.argv.slice(2).map((a) => {
    const eq = a.indexOf('=');
    const [dist, ...rest] = a.slice(eq + 1).split(',');
    const isEnv = (x: string) => /^[A-Z][A-Z0-9_]*=/.test(x);
    const env = Object.fromEntries(rest.filter(isEnv).map((x) => [x.slice(0, x.indexOf('=')), x.slice(x.indexOf('=') + 1)]));
    return { name: a.slice(0, eq), dist, flags: rest.filter((x) => !isEnv(x)), env };
  });
  if (specs.length < 1) throw new Error('usage: ab.js name=distDir[,node-flag...] ...');
  const db = await seed(log);
  const c = new Client({ connectionString: db.url });
  await c.connect();
  const backend = (await c.query('select pg_backend_pid() as pid')).rows[0].pid as number;
  const postmaster = Number(procStat(backend)![1]);
  await c.end();
  const targets: { name: string; t: Target }[] = [];
  const receivers: { name: string; stop(): Promise<string> }[] = [];
  try {
    for (const s of specs) {
      const r = await withReceiver(s.env);
      receivers.push({ name: s.name, stop: r.stop });
      if (Object.keys(r.env).length) log(`${s.name} env: ${JSON.stringify(r.env)}`);
      const t = await startTarget('service', join(s.dist, 'src', 'main.js'), {
        DATABASE_URL: db.url, JWT_SECRET: BENCH_JWT_SECRET, NODE_ENV: 'production', SMTP_URL: 'smtp://127.0.0.1:1',
        APP_URL: 'http://bench.invalid', AUTH_RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn', TRASH_RETENTION_DAYS: '0',
        ...r.env,
      }, s.flags);
      targets.push({ name: s.name, t });
    }
    const results = new Map<string, Run[]>();
    for (const key of scenarioKeys) {
      for (const { t } of targets) await run(t, key, postmaster, warmup);
      for (let round = 0; round < rounds; round++) {
        const order = targets.map((_, i) => targets[(i + round) % targets.length]);
        for (const { name, t } of order) {
          const r = await run(t, key, postmaster, seconds);
          const k = `${key}\t${name}`;
          results.set(k, [...(results.get(k) ?? []), r]);
          log(`${key} ${name}: ${r.rps.toFixed(0)} req/s, node ${r.nodeMs.toFixed(2)} ms/req, pg ${r.pgMs.toFixed(2)} ms/req, p99 ${r.p99} ms${r.non2xx ? `, ${r.non2xx} errors` : ''}`);
        }
      }
    }
    const lines = ['| scenario | target | req/s (median; each round) | Node CPU ms/req | PostgreSQL CPU ms/req | p50 / p99 ms | max RSS MB | errors |', '|---|---|---|---:|---:|---|---:|---:|'];
    for (const [k, rs] of results) {
      const [key, name] = k.split('\t');
      lines.push(`| ${key} | ${name} | ${median(rs.map((r) => r.rps)).toFixed(0)} (${rs.map((r) => r.rps.toFixed(0)).join(', ')}) | ${median(rs.map((r) => r.nodeMs)).toFixed(2)} | ${median(rs.map((r) => r.pgMs)).toFixed(2)} | ${median(rs.map((r) => r.p50))} / ${median(rs.map((r) => r.p99))} | ${Math.max(...rs.map((r) => r.rss)).toFixed(0)} | ${rs.reduce((a, r) => a + r.non2xx, 0)} |`);
    }
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    await Promise.all(targets.map(({ t }) => t.stop()));
    for (const r of receivers) {
      const said = await r.stop();
      if (said) log(`${r.name}: the OTLP receiver ${said}`);
    }
    await db.close();
  }
}

main().catch((err) => {
  process.stderr.write(`ab failed: ${(err as Error)?.stack ?? err}\n`);
  process.exit(1);
});
