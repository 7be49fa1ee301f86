import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Client } from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../src/db/embedded';
import { initOrm, migrate } from '../src/db/orm';
import { benchConfig, metricsHeaders, serviceEnvironment } from './config';
import { call } from './http';
import { distPath, postgresTicks, procStat, startTarget, TICK_MS, waitIdle, type Target } from './processes';
import { requestMakers } from './scenarios';
import { fill } from './seed';
import { caughtUp, startStandby, type Standby } from './standby';
import { repoRoot, startCommand } from './baseline';

/**
 * `npm run bench:scale`: how far workers and a read replica take the service ON THIS MACHINE,
 * and what each tier costs per request, so the same topology can be sized where each part has
 * machines of its own (docs/performance.md, "Scaling: workers and replicas").
 *
 * One seeded primary (bench/seed.ts's fill) and a real streaming standby of it (bench/standby.ts);
 * three services as `npm start` starts them, all on that primary: 1 worker, 2 workers
 * (WEB_CONCURRENCY=2), and 1 worker with DATABASE_REPLICA_URLS = the standby. Each is driven with
 * anonymous REST GET /posts?page=N and GraphQL posts(page: N) (anonymous: the reads a replica
 * may serve), in BENCH_ROUNDS rounds with the order rotating. Per run: req/s, p50/p99, CPU per
 * answer from /proc of the service's process tree (cluster primary + workers), of the primary
 * PostgreSQL, of the standby, of this load generator, and of the whole machine (/proc/stat: what
 * the neighbours took), and the transactions each server committed (pg_stat_database: each of
 * these reads is one autocommit statement, so on the standby that is statements served there).
 */
const resultsDir = join(__dirname, '..', '..', 'bench', 'results');
const log = (msg: string) => process.stderr.write(`[scale ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
/** The replica setup's health probes of the standby: every REPLICA_MAX_LAG_MS / 4 (1000 by default), src/db/replicas.ts. */
const PROBES_PER_SECOND = 4;
/** A backend reports its counts to pg_stat_database up to 10 s after it goes idle. */
const STATS_DELAY_MS = 10_500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CPU ticks of a process and all its descendants (a cluster primary and its workers), reaped ones included; `byPid` has each process's share. */
function treeTicks(root: number, byPid?: Map<number, number>): number {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (name.charCodeAt(0) > 57) continue;
    const f = procStat(Number(name));
    if (f) children.set(Number(f[1]), [...(children.get(Number(f[1])) ?? []), Number(name)]);
  }
  let total = 0;
  const visit = (pid: number, withReaped: boolean) => {
    const f = procStat(pid);
    if (!f) return;
    const own = Number(f[11]) + Number(f[12]) + (withReaped ? Number(f[13]) + Number(f[14]) : 0);
    total += own;
    byPid?.set(pid, own);
    for (const c of children.get(pid) ?? []) visit(c, withReaped);
  };
  visit(root, true);
  return total;
}

/** The whole machine from /proc/stat: busy and total jiffies over all cores. */
function machineTicks(): { busy: number; total: number } {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = cpu.slice(0, 8).reduce((a, x) => a + x, 0); // user..steal (guest is inside user)
  return { busy: total - cpu[3] - cpu[4], total };
}

/** Transactions committed and rolled back in the bench database, per that server's own statistics. */
async function xacts(c: Client): Promise<number> {
  await c.query('select pg_stat_clear_snapshot()');
  const { rows } = await c.query<{ n: string }>('select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()');
  return Number(rows[0].n);
}

/** Statements the service sent to each pool so far (/metrics, db_queries_total). */
async function poolQueries(t: Target): Promise<{ primary: number; replica: number }> {
  const text = String((await call(t.url, 'GET', '/metrics', { headers: metricsHeaders })).body);
  const count = (pool: string) => Number(new RegExp(`^db_queries_total\\{pool="${pool}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { primary: count('primary'), replica: count('replica-1') };
}

async function postmasterOf(c: Client): Promise<number> {
  const backend = Number((await c.query('select pg_backend_pid() as pid')).rows[0].pid);
  return Number(procStat(backend)?.[1]);
}

interface Setup { key: string; label: string; env: Record<string, string>; target?: Target }
interface Run {
  rps: number; p50: number; p99: number; errors: number; responses: number;
  /** CPU ms per answer. */
  node: number; pg: number; standby: number; loadgen: number;
  /** Cores busy on the whole machine during the run, and those of everything outside this bench. */
  busyCores: number; otherCores: number;
  /** Replica setup only: transactions per answer on the standby (its pg_stat_database), statements sent per pool (the service's /metrics). */
  txStandby: number; sqlPrimary: number; sqlReplica: number;
}

async function main(): Promise<void> {
  const started = Date.now();
  const cores = benchConfig.cores;
  log(`${cores} cores, node ${process.version}; ${benchConfig.scaleRounds} round(s) of ${benchConfig.scaleDuration} s per run after ${benchConfig.warmup} s warm-up, ${benchConfig.connections} connections`);

  const dir = mkdtempSync(join(tmpdir(), 'blog-bench-scale-'));
  chmodSync(dir, 0o755); // as root, PostgreSQL runs as `postgres`, who must reach both clusters
  let pg: EmbeddedPostgres | undefined;
  let standby: Standby | undefined;
  const setups: Setup[] = [
    { key: '1w', label: '1 worker', env: { WEB_CONCURRENCY: '1' } },
    { key: '2w', label: '2 workers', env: { WEB_CONCURRENCY: '2' } },
    { key: '1w+r', label: '1 worker + replica', env: { WEB_CONCURRENCY: '1' } },
  ];
  const clients: Client[] = [];
  const stopAll = async () => {
    await Promise.allSettled(setups.map(async (s) => s.target?.stop()));
    await Promise.allSettled(clients.map((c) => c.end()));
    await standby?.stop();
    await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stopAll().finally(() => process.exit(130)));

  const scenarios = [
    { key: 'list', label: 'REST GET /posts?page=N', make: requestMakers.list },
    { key: 'graphql', label: 'GraphQL posts(page: N)', make: requestMakers.graphql },
  ];
  const runs: Record<string, Run[]> = {};
  try {
    pg = await startEmbeddedPostgres({ dataDir: join(dir, 'primary'), log });
    const admin = new Client({ connectionString: pg.url });
    await admin.connect();
    try { await admin.query('create database bench_scale'); } finally { await admin.end(); }
    const dbUrl = (base: string) => Object.assign(new URL(base), { pathname: '/bench_scale' }).toString();
    const primaryUrl = dbUrl(pg.url);
    const orm = await initOrm({ clientUrl: primaryUrl });
    try { await migrate(orm); } finally { await orm.close(true); }
    const seedStart = Date.now();
    const c0 = new Client({ connectionString: primaryUrl });
    await c0.connect();
    try { await fill(c0, benchConfig); } finally { await c0.end(); }
    log(`seeded ${benchConfig.users} users, ${benchConfig.posts} posts, ${benchConfig.comments} comments in ${Date.now() - seedStart} ms`);

    // shared_buffers as the primary's, so both tiers read from the same size of cache.
    standby = await startStandby(pg, join(dir, 'standby'), { name: 'bench-standby', settings: { shared_buffers: '128MB' } });
    const standbyUrl = dbUrl(standby.url);
    await caughtUp(primaryUrl, standbyUrl);
    log(`standby streaming (pid ${standby.pid})`);
    setups[2].env.DATABASE_REPLICA_URLS = standbyUrl;

    const onPrimary = new Client({ connectionString: primaryUrl });
    const onStandby = new Client({ connectionString: standbyUrl });
    for (const c of [onPrimary, onStandby]) {
      c.on('error', () => undefined); // cut at the end when the servers stop
      await c.connect();
      clients.push(c);
    }
    const primaryPid = await postmasterOf(onPrimary);

    const command = startCommand(repoRoot);
    log(`services: ${command.text} (as npm start starts it), NODE_ENV=production`);
    for (const s of setups) {
      s.target = await startTarget(s.key, distPath('src', 'main.js'), {
        ...command.env,
        ...serviceEnvironment(primaryUrl, join(dir, `data-${s.key.replace(/\W/g, '')}`)),
        ...benchConfig.serviceEnv,
        ...s.env,
      }, command.flags);
    }
    // The replica must be in use before anything is measured (the first poll may predate the catch-up).
    for (const deadline = Date.now() + 20_000; ; await sleep(200)) {
      const ready = await call(setups[2].target!.url, 'GET', '/readyz');
      if (ready.body?.replicas?.in_use?.includes('replica-1')) break;
      if (Date.now() > deadline) throw new Error(`the replica is not in use: /readyz says ${JSON.stringify(ready.body)}`);
    }
    for (const s of setups) {
      const page = await call(s.target!.url, 'GET', '/posts?page=2');
      if (page.status !== 200 || page.body?.data?.length !== 10) throw new Error(`${s.label}: GET /posts?page=2 → ${page.status}, not a 10-post page`);
    }

    for (const sc of scenarios) {
      const opts = (t: Target, duration: number) => ({
        url: t.url, connections: benchConfig.connections, duration, timeout: 30,
        requests: [{ setupRequest: (req: object) => ({ ...req, ...sc.make() }) }],
      });
      // Warm-ups first, the replica's first: a backend reports to pg_stat_database up to 10 s
      // after it goes idle, so the standby's count of a run is only right when its previous
      // traffic ended more than 10 s before (and it is read 10.5 s after the run).
      for (const s of [setups[2], setups[0], setups[1]]) if (benchConfig.warmup > 0) await autocannon(opts(s.target!, benchConfig.warmup));
      let replicaQuietSince = Date.now() - (benchConfig.warmup > 0 ? 2 * benchConfig.warmup * 1000 : STATS_DELAY_MS);
      for (let round = 0; round < benchConfig.scaleRounds; round++) {
        // Rotated each round, so a neighbour's burst does not always fall on the same setup.
        const order = setups.map((_, i) => setups[(i + round) % setups.length]);
        for (const s of order) {
          const t = s.target!;
          const dead = setups.find((x) => x.target!.exited());
          if (dead) throw new Error(`${dead.label} died (${dead.target!.exited()}):\n${dead.target!.output()}`);
          await waitIdle(setups.map((x) => x.target!.pid));
          const withReplica = s === setups[2];
          const pools0 = withReplica ? await poolQueries(t) : undefined;
          // Short runs (BENCH_DURATION): the standby's previous traffic must be reported before the count starts.
          if (withReplica) await sleep(replicaQuietSince + STATS_DELAY_MS - Date.now());
          const tx0 = withReplica ? await xacts(onStandby) : 0;
          const windowStart = Date.now();
          const m0 = machineTicks();
          const split0 = new Map<number, number>();
          const cpu0 = { node: treeTicks(t.pid, split0), pg: postgresTicks(primaryPid), standby: postgresTicks(standby.pid), self: process.cpuUsage() };
          const r = await autocannon(opts(t, benchConfig.scaleDuration));
          const self = process.cpuUsage(cpu0.self);
          const split1 = new Map<number, number>();
          const cpu = { node: treeTicks(t.pid, split1) - cpu0.node, pg: postgresTicks(primaryPid) - cpu0.pg, standby: postgresTicks(standby.pid) - cpu0.standby };
          const m1 = machineTicks();
          let responses = 0;
          for (const { count } of Object.values(r.statusCodeStats ?? {})) responses += Number(count);
          const perAnswer = (n: number) => n / Math.max(1, responses);
          let pools = { primary: NaN, replica: NaN };
          let txStandby = NaN;
          if (withReplica) {
            await waitIdle([t.pid]);
            const pools1 = await poolQueries(t);
            pools = { primary: perAnswer(pools1.primary - pools0!.primary), replica: perAnswer(pools1.replica - pools0!.replica) };
            replicaQuietSince = Date.now();
            await sleep(STATS_DELAY_MS);
            // Minus the routing's own health probes: one a poll (every 250 ms with the default
            // REPLICA_MAX_LAG_MS), each a transaction on the standby.
            txStandby = perAnswer((await xacts(onStandby)) - tx0 - ((Date.now() - windowStart) / 1000) * PROBES_PER_SECOND);
          }
          const per = (ticks: number) => perAnswer(ticks * TICK_MS);
          const busyCores = ((m1.busy - m0.busy) / Math.max(1, m1.total - m0.total)) * cores;
          const oursCores = ((cpu.node + cpu.pg + cpu.standby) * TICK_MS + (self.user + self.system) / 1000) / (r.duration * 1000);
          const run: Run = {
            rps: responses / r.duration, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx, responses,
            node: per(cpu.node), pg: per(cpu.pg), standby: per(cpu.standby), loadgen: perAnswer((self.user + self.system) / 1000),
            busyCores, otherCores: Math.max(0, busyCores - oursCores),
            txStandby, sqlPrimary: pools.primary, sqlReplica: pools.replica,
          };
          (runs[`${sc.key} ${s.key}`] ??= []).push(run);
          // With workers: how the Node CPU divides between the cluster primary and each worker.
          const split = split1.size > 1 ? ` (${[...split1].map(([pid, n]) => `${pid === t.pid ? 'primary' : `worker ${pid}`} ${per(n - (split0.get(pid) ?? 0)).toFixed(2)}`).join(', ')})` : '';
          log(`${sc.label}, ${s.label}: ${run.rps.toFixed(0)} req/s, p50/p99 ${run.p50}/${run.p99} ms; CPU ms/req Node ${run.node.toFixed(2)}${split}, PG primary ${run.pg.toFixed(2)}, standby ${run.standby.toFixed(2)}, load generator ${run.loadgen.toFixed(2)}; machine ${busyCores.toFixed(2)} of ${cores} cores busy (${run.otherCores.toFixed(2)} outside the bench)` +
            (withReplica ? `; per request: ${run.txStandby.toFixed(2)} transactions on the standby (pg_stat_database), statements sent ${run.sqlPrimary.toFixed(2)} primary / ${run.sqlReplica.toFixed(2)} replica-1 (/metrics)` : '') +
            (run.errors ? `; ${run.errors} errors` : ''));
        }
      }
    }
  } finally {
    await stopAll();
  }

  // Means over the rounds; CPU and transactions per answer over all answers.
  const combine = (rs: Run[]): Run => {
    const n = rs.reduce((a, r) => a + r.responses, 0) || 1;
    const mean = (f: (r: Run) => number) => rs.reduce((a, r) => a + f(r), 0) / rs.length;
    const perAnswer = (f: (r: Run) => number) => rs.reduce((a, r) => a + f(r) * r.responses, 0) / n;
    return {
      rps: mean((r) => r.rps), p50: mean((r) => r.p50), p99: mean((r) => r.p99), errors: rs.reduce((a, r) => a + r.errors, 0), responses: n,
      node: perAnswer((r) => r.node), pg: perAnswer((r) => r.pg), standby: perAnswer((r) => r.standby), loadgen: perAnswer((r) => r.loadgen),
      busyCores: mean((r) => r.busyCores), otherCores: mean((r) => r.otherCores),
      txStandby: perAnswer((r) => r.txStandby), sqlPrimary: perAnswer((r) => r.sqlPrimary), sqlReplica: perAnswer((r) => r.sqlReplica),
    };
  };
  const f1 = (x: number) => x.toFixed(1);
  const f2 = (x: number) => x.toFixed(2);
  const table = [
    '| scenario | setup | req/s | × 1 worker | p50 / p99 ms | Node CPU ms/req | PG primary CPU ms/req | PG standby CPU ms/req | load generator CPU ms/req | machine busy (outside the bench), cores | on the standby, tx/req (its pg_stat_database) | statements/req primary / replica-1 | errors |',
    '|---|---|---:|---:|---|---:|---:|---:|---:|---|---:|---:|---:|',
  ];
  const ceilings: string[] = [];
  for (const sc of scenarios) {
    const base = combine(runs[`${sc.key} 1w`]);
    for (const s of setups) {
      const x = combine(runs[`${sc.key} ${s.key}`]);
      table.push(`| ${s.key === '1w' ? sc.label : ''} | ${s.label} | ${x.rps.toFixed(0)} | ${f2(x.rps / base.rps)}× | ${f1(x.p50)} / ${f1(x.p99)} | ${f2(x.node)} | ${f2(x.pg)} | ${f2(x.standby)} | ${f2(x.loadgen)} | ${f2(x.busyCores)} (${f2(x.otherCores)}) of ${cores} | ${Number.isNaN(x.txStandby) ? '' : f2(x.txStandby)} | ${Number.isNaN(x.sqlPrimary) ? '' : `${f2(x.sqlPrimary)} / ${f2(x.sqlReplica)}`} | ${x.errors} |`);
    }
    // What one core of each tier answers, were it alone on that core (CPU per answer, 1 worker).
    const dbMs = combine(runs[`${sc.key} 1w+r`]);
    ceilings.push(`- ${sc.label}: one Node core ≈ ${(1000 / base.node).toFixed(0)} req/s (${f2(base.node)} ms), one PostgreSQL core ≈ ${(1000 / base.pg).toFixed(0)} req/s (${f2(base.pg)} ms); with the replica, standby ${f2(dbMs.standby)} ms + primary ${f2(dbMs.pg)} ms per answer.`);
  }
  const md = [
    '# Scaling: workers and a read replica',
    '',
    `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${cores} cores, node ${process.version}; ${benchConfig.users} users, ${benchConfig.posts} posts, ${benchConfig.comments} comments; ` +
      `${benchConfig.scaleRounds} rotated round(s) of ${benchConfig.scaleDuration} s per run after ${benchConfig.warmup} s warm-up, ${benchConfig.connections} connections, anonymous requests. ` +
      'Services: `npm start` (NODE_ENV=production) on one seeded primary; "+ replica": DATABASE_REPLICA_URLS = a streaming standby of it on this machine.',
    '',
    ...table,
    '',
    'Per-core ceilings of each tier (1000 / CPU ms per answer, measured with 1 worker):',
    ...ceilings,
    '',
    `Total run: ${((Date.now() - started) / 1000).toFixed(0)} s.`,
  ].join('\n');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'scale.md'), md + '\n');
  process.stdout.write(md + '\n');
}

main().catch((err) => {
  process.stderr.write(`bench:scale failed: ${(err as Error)?.stack ?? err}\n`);
  process.exit(1);
});
