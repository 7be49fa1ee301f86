import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_JWT_SECRET, BENCH_PASSWORD, benchConfig, userEmail } from './config';
import { call } from './http';
import { distPath, startTarget, type Target } from './processes';
import { POSTS_QUERY, scenarios, type Measurement } from './scenarios';
import { seed } from './seed';
import { SqlStats } from './sql-stats';

/**
 * `npm run bench`: seeds a scratch database, starts the service and the hand-written reference
 * in processes of their own, drives each scenario against both with autocannon from this
 * process, and prints (and writes to bench/results/latest.md) the table and the targets.
 */
const resultsDir = join(__dirname, '..', '..', 'bench', 'results');
const log = (msg: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

function bcryptBaseline(): number {
  const res = spawnSync(process.execPath, [distPath('bench', 'bcrypt-baseline.js'), String(benchConfig.bcryptSeconds)], {
    env: { ...process.env, UV_THREADPOOL_SIZE: String(benchConfig.cores) },
    encoding: 'utf8',
  });
  if (res.status !== 0) throw new Error(`bcrypt baseline failed: ${res.stderr}`);
  return (JSON.parse(res.stdout) as { perSecond: number }).perSecond;
}

/** One request of each kind, checked against CONTRACT.md's shapes; problems are reported, not fatal. */
async function contractCheck(t: Target): Promise<string[]> {
  const problems: string[] = [];
  const get = (path: string, method = 'GET', body?: object) =>
    call(t.url, method, path, body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {});
  const list = await get('/posts?page=2');
  const first = list.body?.data?.[0];
  if (list.status !== 200 || list.body?.data?.length !== 10 || typeof list.body?.total !== 'number') problems.push(`GET /posts?page=2 → ${list.status}, not a 10-post page`);
  else if (!first.user?.name || !Array.isArray(first.comments) || typeof first.comments_count !== 'number' || (first.comments.length && !first.comments[0].user))
    problems.push('GET /posts: posts lack user / comments (with user) / comments_count');
  const gql = await get('/graphql', 'POST', { query: POSTS_QUERY, variables: { page: 2 } });
  if (gql.status !== 200 || gql.body?.errors || gql.body?.data?.posts?.data?.length !== 10)
    problems.push(`GraphQL posts → ${gql.status} ${JSON.stringify(gql.body?.errors?.[0]?.message ?? '')}`);
  const show = await get('/posts/1');
  if (show.status !== 200 || !show.body?.user) problems.push(`GET /posts/1 → ${show.status}`);
  const login = await get('/auth/login', 'POST', { email: userEmail(1), password: BENCH_PASSWORD });
  if (login.status !== 200 || typeof login.body?.token !== 'string') problems.push(`POST /auth/login → ${login.status}`);
  return problems;
}

const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : 'n/a');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const pair = (a: string, b: string) => `${a} / ${b}`;
const sqlText = (m: Measurement) => (m.sqlPerRequest === null ? 'n/a' : m.sqlPerRequest.toFixed(1));

async function main(): Promise<void> {
  const started = Date.now();
  log(`${benchConfig.cores} cores, node ${process.version}; ${benchConfig.duration} s per scenario after ${benchConfig.warmup} s warm-up`);
  if (Object.keys(benchConfig.serviceEnv).length) log(`service env: ${JSON.stringify(benchConfig.serviceEnv)}`);
  let bcryptPerSecond = NaN;

  const db = await seed(log);
  const sql = await SqlStats.connect(db.url, db.statements);
  const targets: Target[] = [];
  // Ctrl-C mid-run: stop both servers and the scratch PostgreSQL rather than leave them behind.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping`);
      void Promise.allSettled(targets.map((t) => t.stop()))
        .then(() => sql.close().catch(() => undefined))
        .then(() => db.close())
        .finally(() => process.exit(130));
    });
  }
  const rows: { label: string; key: string; svc: Measurement; ref: Measurement }[] = [];
  const problems: Record<string, string[]> = {};
  try {
    const common = { DATABASE_URL: db.url, JWT_SECRET: BENCH_JWT_SECRET };
    const profDir = join(resultsDir, 'prof');
    if (benchConfig.cpuProf) mkdirSync(profDir, { recursive: true });
    targets.push(
      await startTarget('service', distPath('src', 'main.js'), {
        ...common,
        NODE_ENV: 'production',
        SMTP_URL: 'smtp://127.0.0.1:1',
        APP_URL: 'http://bench.invalid',
        AUTH_RATE_LIMIT_PER_MINUTE: '0',
        LOG_LEVEL: 'warn',
        DATA_DIR: join(resultsDir, '.service-data'),
        ...benchConfig.serviceEnv,
      }, [
        // A heap cap as an operator would set it (NODE_OPTIONS; npm start has none): without it V8 grows the heap to ~300 MB under load.
        '--max-old-space-size=192',
        ...(benchConfig.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []),
      ]),
      await startTarget('reference', distPath('bench', 'reference', 'server.js'), common),
    );
    await sql.calibrate(6);
    log(`background SQL while idle: ${sql.backgroundPerSecond.toFixed(1)} statements/s`);
    for (const t of targets) {
      problems[t.name] = await contractCheck(t);
      for (const p of problems[t.name]) log(`WARNING ${t.name}: ${p}`);
    }
    const [service, reference] = targets;
    for (const s of scenarios) {
      if (benchConfig.only.length && !benchConfig.only.includes(s.key)) continue;
      const dead = targets.find((t) => t.exited());
      if (dead) throw new Error(`${dead.name} died (${dead.exited()}):\n${dead.output()}`);
      if (s.key === 'login') {
        // Measured right before the logins, so both see the same machine (others may be busy).
        bcryptPerSecond = bcryptBaseline();
        log(`bcrypt cost 12 alone, ${benchConfig.cores} threads: ${bcryptPerSecond.toFixed(2)} compares/s`);
      }
      const svc = await s.run(service, sql);
      const svcTop = await sql.top(6);
      const ref = await s.run(reference, sql);
      rows.push({ label: s.label, key: s.key, svc, ref });
      log(`${s.label}: service ${f0(svc.rps)} req/s p99 ${svc.p99} ms, SQL/req ${sqlText(svc)}; reference ${f0(ref.rps)} req/s p99 ${ref.p99} ms`);
      if (process.env.BENCH_SHOW_SQL === '1') for (const q of svcTop) log(`   ${q.calls}× ${q.meanMs.toFixed(2)} ms  ${q.query.slice(0, 220)}`);
      for (const [name, m] of [['service', svc], ['reference', ref]] as const) {
        const bad = Object.entries(m.statusCodes).filter(([c]) => !c.startsWith('2'));
        if (bad.length || m.errors) log(`   ${name}: ${m.errors} errors; non-2xx ${JSON.stringify(Object.fromEntries(bad))}`);
      }
    }
  } finally {
    for (const t of targets) if (t.exited()) log(`${t.name} exited (${t.exited()}); its last output:\n${t.output()}`);
    await Promise.all(targets.map((t) => t.stop()));
    await sql.close();
    await db.close();
  }

  const table = [
    '| scenario | service req/s | reference req/s | ratio | p50 ms (svc / ref) | p99 ms (svc / ref) | errors (svc / ref) | SQL/req (svc / ref) | max RSS MB (svc / ref) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(({ label, svc, ref }) =>
      `| ${label} | ${f0(svc.rps)} | ${f0(ref.rps)} | ${(svc.rps / ref.rps * 100).toFixed(0)}% | ${pair(f1(svc.p50), f1(ref.p50))} | ${pair(f1(svc.p99), f1(ref.p99))} | ${pair(String(svc.errors), String(ref.errors))} | ${pair(sqlText(svc), sqlText(ref))} | ${pair(f0(svc.rssMb), f0(ref.rssMb))} |`),
  ];

  const by = (k: string) => rows.find((r) => r.key === k);
  const targetsLines: string[] = [];
  const check = (name: string, row: unknown, ok: () => boolean, detail: () => string) => {
    targetsLines.push(row ? `- ${ok() ? 'PASS' : 'MISS'}: ${name}: ${detail()}` : `- n/a: ${name} (scenario not run)`);
  };
  const list = by('list'), gql = by('graphql'), login = by('login'), calm = by('calm'), storm = by('storm');
  check('REST GET /posts >= 70% of reference req/s', list, () => list!.svc.rps >= 0.7 * list!.ref.rps,
    () => `${f0(list!.svc.rps)} vs ${f0(list!.ref.rps)} req/s = ${(list!.svc.rps / list!.ref.rps * 100).toFixed(0)}%`);
  check('GraphQL posts >= 60% of reference req/s', gql, () => gql!.svc.rps >= 0.6 * gql!.ref.rps,
    () => `${f0(gql!.svc.rps)} vs ${f0(gql!.ref.rps)} req/s = ${(gql!.svc.rps / gql!.ref.rps * 100).toFixed(0)}%`);
  check(`login >= 90% of bcrypt cost 12 on ${benchConfig.cores} cores`, login, () => login!.svc.rps >= 0.9 * bcryptPerSecond,
    () => `${login!.svc.rps.toFixed(2)} logins/s vs ${bcryptPerSecond.toFixed(2)} compares/s = ${(login!.svc.rps / bcryptPerSecond * 100).toFixed(0)}% (reference ${(login!.ref.rps / bcryptPerSecond * 100).toFixed(0)}%)`);
  check('GET /posts p99 during a login storm <= 2x without', calm && storm, () => storm!.svc.p99 <= 2 * calm!.svc.p99,
    () => `${storm!.svc.p99} ms vs ${calm!.svc.p99} ms = ${(storm!.svc.p99 / calm!.svc.p99).toFixed(1)}x (reference ${(storm!.ref.p99 / calm!.ref.p99).toFixed(1)}x)`);
  const maxRss = Math.max(0, ...rows.map((r) => r.svc.rssMb));
  check('service RSS under load < 250 MB', rows.length, () => maxRss < 250, () => `max ${f0(maxRss)} MB`);

  const contract = Object.entries(problems).flatMap(([t, ps]) => ps.map((p) => `- ${t}: ${p}`));
  const md = [
    `# Benchmark results`,
    '',
    `${new Date().toISOString().slice(0, 10)}, ${benchConfig.cores} cores, node ${process.version}; ${benchConfig.users} users, ${benchConfig.posts} posts, ${benchConfig.comments} comments; ` +
      `${benchConfig.duration} s per scenario after ${benchConfig.warmup} s warm-up, ${benchConfig.connections} connections; bcrypt cost 12 alone: ${bcryptPerSecond.toFixed(2)} compares/s.`,
    '',
    ...table,
    '',
    'Targets:',
    ...targetsLines,
    ...(contract.length ? ['', 'Contract check problems (results for those routes are not comparable):', ...contract] : []),
    '',
    `Total run: ${((Date.now() - started) / 1000).toFixed(0)} s.`,
  ].join('\n');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'latest.md'), md + '\n');
  process.stdout.write(md + '\n');
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${(err as Error)?.stack ?? err}\n`);
  process.exit(1);
});
