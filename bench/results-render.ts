/**
 * bench/results/latest.json and latest.md: `npm run bench` gathers every figure of a run into one
 * JSON object (BenchResults, written as latest.json, or node26.json, fixed-rate.json for those
 * runs: bench/run.ts) and renders latest.md from that object alone with renderResults, so the
 * Markdown holds no figure the JSON does not, and a test can re-render a committed latest.json and
 * compare it with latest.md. Fields added since the first such file are optional: a file written
 * before them renders as it did. Numbers that are not finite (a target that answered nothing, a
 * scenario that did not run) are null in the JSON and `n/a` in the Markdown.
 * This module imports nothing at run time: a test renders without the bench's dependencies.
 */

/** A figure: null when not measurable (NaN or infinite before JSON). */
export type Num = number | null;

/** What a goal's line says: PASS / FAIL; n/a when it could not be judged (the detail says why); info for figures without a target. */
type GoalStatus = 'PASS' | 'FAIL' | 'n/a' | 'info';

export interface Goal {
  name: string;
  status: GoalStatus;
  detail: string;
}

/** One target in one scenario: medians over the rounds, and its paired ratios against each anchor that ran the scenario too. */
interface TargetResult {
  /** bench/processes.ts's target name: service, raw, express, postgraphile, postgraphile5, baseline. */
  name: string;
  reqPerSec: Num;
  p50Ms: Num;
  p99Ms: Num;
  /** CPU of the target's process per answered request. */
  nodeCpuMsPerReq: Num;
  /** CPU of all PostgreSQL processes per answered request (null when PostgreSQL is not on this machine). */
  pgCpuMsPerReq: Num;
  /** SQL statements per request (counted in the first round); null when not counted. */
  sqlPerReq: Num;
  /** The highest 200 ms RSS sample during the measured runs. */
  maxRssMb: Num;
  /** Connection errors, timeouts and unexpected statuses, over all rounds. */
  errors: number;
  /** Answers over all rounds, by status code. */
  responses: number;
  statusCodes: Record<string, number>;
  /** req/s of each round, in round order (the pairs of the paired ratios). */
  reqPerSecByRound: Num[];
  /** This target's req/s over the anchor's: each round's ratio, then the median. Keys: the anchors that ran this scenario, this target excepted. */
  ratios: Record<string, Num>;
}

export interface ScenarioResult {
  /** bench/scenarios.ts's key (list-first, list, show, graphql-first, graphql, ...). */
  key: string;
  label: string;
  /** Run in rotated rounds and compared as paired medians. */
  paired: boolean;
  rounds: number;
  /** The service first, then its peers, then the baseline. */
  targets: TargetResult[];
}

interface RealtimeResult {
  subscribers: Num;
  held: Num;
  p50: Num;
  p99: Num;
  rssPerSubscriberKb: Num;
  /** The same idle subscribers on the bare graphql-ws server (bench/reference/graphql-ws.ts). */
  bareRssPerSubscriberKb?: Num;
  listRpsAlone: Num;
  listRpsWith: Num;
  serverCpuMsPerEvent: Num;
  clientCpuMsPerEvent: Num;
}

interface WriteMixRun {
  rps: Num;
  nodeMs: Num;
  pgMs: Num;
  errors: number;
}

/** One side of the write mix (without / with an Idempotency-Key): medians over its rounds, and the rounds. */
interface WriteMixSide {
  reqPerSec: Num;
  nodeCpuMsPerReq: Num;
  pgCpuMsPerReq: Num;
  errors: number;
  runs: WriteMixRun[];
}

export interface WritesResult {
  seconds: number;
  connections: number;
  plain: WriteMixSide;
  keyed: WriteMixSide;
  /** Time per request keyed / plain: each round's ratio, then the median. */
  ratio: Num;
  ratioByRound: Num[];
  /** The bound on `ratio`. */
  goal: number;
  pass: boolean;
}

/** The soak (bench/soak.ts): a fresh service under mixed reads and writes for minutes, then left to settle. */
interface SoakResult {
  seconds: number;
  connections: number;
  requests: number;
  errors: number;
  statusCodes: Record<string, number>;
  startRssMb: Num;
  peakRssMb: Num;
  endRssMb: Num;
  settledRssMb: Num;
  settledAfterSeconds: Num;
  settled: boolean;
}

/** A process's RSS in MB and its parts (/proc/<pid>/status: VmRSS, RssAnon, RssFile, RssShmem). */
interface Resident {
  rss: Num;
  anon: Num;
  file: Num;
  shmem: Num;
}

export interface BenchResults {
  schemaVersion: 1;
  run: {
    /** When the run ended (ISO 8601). */
    date: string;
    totalSeconds: number;
    /** The commit of the tree the bench was built from (HEAD), and whether it had uncommitted changes outside bench/results, README.md and docs/; null outside a git checkout. */
    commit: string | null;
    dirty: boolean | null;
    /** The Node the service, the baseline and the references ran on (`--node`, else the bench's own). */
    node: string;
    /** The Node of the load generator (and of PostGraphile 4): the bench's own. */
    harnessNode?: string;
    cores: number;
    data: { users: number; posts: number; comments: number; tenantPosts: number; tenants: number };
    rounds: number;
    seconds: number;
    warmup: number;
    connections: number;
    /** Fixed-rate mode: every target of the page scenarios held to this many req/s (autocannon's overallRate); null: full load. */
    rate?: number | null;
    /** --only's scenario keys as expanded; null: every scenario. */
    only: string[] | null;
    /** `node <flags> dist/src/main.js`: how the service was started (npm start's flags). */
    serviceCommand: string;
    /** The environment that makes the service and the Express reference log alike. */
    logLevel: string;
    /** bcrypt cost 12 compares/s on every core, measured right before the logins; null when not run. */
    bcryptPerSecond: Num;
    baseline: { ref: string; commit: string; command: string } | null;
  };
  /** The targets the ratio columns compare against, in column order. */
  anchors: string[];
  /** How the tables name each target. */
  names: Record<string, string>;
  scenarios: ScenarioResult[];
  /** Each target's highest RSS since it started (VmHWM) after the load scenarios, for the targets that ran at least one. */
  peakRssMb: Record<string, Num>;
  /** Each target's RSS right after it was ready and answered one request, before any load. */
  restRssMb?: Record<string, Resident>;
  realtime: RealtimeResult[];
  writes: WritesResult | null;
  soak?: SoakResult | null;
  /** The targets of the issue, in order. */
  goals: Goal[];
  /** Earlier goals and informative ratios, still shown. */
  others: Goal[];
  /** What the contract check found (those routes' figures are not comparable). */
  contractProblems: { target: string; problem: string }[];
}

const fixed = (digits: number) => (n: Num): string => (n !== null && Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
const f0 = fixed(0);
const f1 = fixed(1);
const f2 = fixed(2);

/** Where the load generator ran on another Node than the targets (`--node`): which. */
const otherHarness = (m: BenchResults['run']) => (m.harnessNode && m.harnessNode !== m.node ? ` (load generator and PostGraphile 4 on ${m.harnessNode})` : '');

/** A goal as a list item. */
const goalLine = (g: Goal): string => `- ${g.status}: ${g.name}: ${g.detail}`;

function table(r: BenchResults): string[] {
  // A run of the realtime scenario, the write mix or the soak alone has no table.
  if (!r.scenarios.length) return [];
  const shown = (n: string) => r.names[n] ?? n;
  const ratio = (t: TargetResult, a: string) => (a in t.ratios ? `${f2(t.ratios[a])}×` : '');
  // A column for each anchor some target has a ratio against (none at a fixed rate).
  const anchors = r.anchors.filter((a) => r.scenarios.some((s) => s.targets.some((t) => a in t.ratios)));
  return [
    '',
    `| scenario | target | req/s | ${anchors.map((a) => `× ${shown(a)} | `).join('')}p50 / p99 ms | Node CPU ms/req | PostgreSQL CPU ms/req | SQL/req | max RSS MB | errors |`,
    `|---|---|---:|${anchors.map(() => '---:|').join('')}---|---:|---:|---:|---:|---:|`,
    ...r.scenarios.flatMap((s) => s.targets.map((t) =>
      `| ${t.name === 'service' ? s.label : ''} | ${shown(t.name)} | ${f0(t.reqPerSec)} | ${anchors.map((a) => `${ratio(t, a)} | `).join('')}${f1(t.p50Ms)} / ${f1(t.p99Ms)} | ${f2(t.nodeCpuMsPerReq)} | ${f2(t.pgCpuMsPerReq)} | ${f1(t.sqlPerReq)} | ${f0(t.maxRssMb)} | ${t.errors} |`)),
  ];
}

function againstBaseline(r: BenchResults): string[] {
  const b = r.run.baseline;
  if (!b) return [];
  const pairs = r.scenarios.flatMap((s) => {
    const service = s.targets.find((t) => t.name === 'service');
    const baseline = s.targets.find((t) => t.name === 'baseline');
    return service && baseline ? [{ s, service, baseline }] : [];
  });
  return [
    '',
    `Against the baseline \`${b.ref}\` (${b.commit.slice(0, 10)}), built in a temporary worktree and started as its \`npm start\` (\`${b.command}\`), in the same rounds:`,
    '',
    '| scenario | service req/s | baseline req/s | service / baseline (paired median) | Node CPU ms/req service | baseline | PostgreSQL CPU ms/req service | baseline | max RSS MB service | baseline |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...pairs.map(({ s, service: a, baseline: x }) =>
      `| ${s.label} | ${f0(a.reqPerSec)} | ${f0(x.reqPerSec)} | ${f2(a.ratios.baseline ?? null)}× | ${f2(a.nodeCpuMsPerReq)} | ${f2(x.nodeCpuMsPerReq)} | ${f2(a.pgCpuMsPerReq)} | ${f2(x.pgCpuMsPerReq)} | ${f0(a.maxRssMb)} | ${f0(x.maxRssMb)} |`),
  ];
}

function peakRss(r: BenchResults): string[] {
  const entries = Object.entries(r.peakRssMb);
  if (!entries.length) return [];
  return ['', `Peak RSS since start (VmHWM) after the load scenarios: ${entries.map(([n, mb]) => `${r.names[n] ?? n} ${f0(mb)} MB`).join(', ')}.`];
}

/** Each target's RSS right after its start and first request(s), and its parts (runs that recorded it). */
function restRss(r: BenchResults): string[] {
  const entries = Object.entries(r.restRssMb ?? {});
  if (!entries.length) return [];
  return [
    '',
    'RSS at rest: right after each target was ready and had answered one request (REST `GET /posts?page=1`; the GraphQL page for the PostGraphiles), before any load (/proc/<pid>/status):',
    '',
    '| target | RSS MB | anonymous | file-backed | shared |',
    '|---|---:|---:|---:|---:|',
    ...entries.map(([n, x]) => `| ${r.names[n] ?? n} | ${f1(x.rss)} | ${f1(x.anon)} | ${f1(x.file)} | ${f1(x.shmem)} |`),
  ];
}

function realtimeTable(rows: RealtimeResult[]): string[] {
  if (!rows.length) return [];
  const change = (x: RealtimeResult) => (x.listRpsAlone && x.listRpsWith !== null ? ((x.listRpsWith / x.listRpsAlone - 1) * 100) : null);
  // Runs before the bare graphql-ws server was measured have no such column.
  const bare = rows.some((x) => x.bareRssPerSubscriberKb !== undefined);
  return [
    '',
    `Realtime (commentAdded on one post, 100 more on other posts, one connection each; comments through REST; service only${bare ? ', idle subscribers also on a bare graphql-ws server' : ''}):`,
    '',
    `| idle subscribers | held | last delivery after the write answered, p50 / p99 ms | RSS per idle subscriber |${bare ? ' bare graphql-ws server |' : ''} CPU per comment, service / load generator | GET /posts req/s alone → with them |`,
    `|---:|---:|---:|---:|${bare ? '---:|' : ''}---:|---:|`,
    ...rows.map((x) => `| ${f0(x.subscribers)} + 100 | ${f0(x.held)} | ${f1(x.p50)} / ${f1(x.p99)} | ${f1(x.rssPerSubscriberKb)} KB |${bare ? ` ${f1(x.bareRssPerSubscriberKb ?? null)} KB |` : ''} ${f0(x.serverCpuMsPerEvent)} / ${f0(x.clientCpuMsPerEvent)} ms | ${f0(x.listRpsAlone)} → ${f0(x.listRpsWith)} (${f0(change(x))}%) |`),
  ];
}

/** The soak's figures in a sentence (latest.md). */
function soakLines(x: SoakResult | null | undefined): string[] {
  if (!x) return [];
  return [
    '',
    `Soak (a service of its own, started fresh; ${f0(x.seconds)} s of 80% reads / 20% writes at ${x.connections} connections, SMTP down): ` +
      `${x.requests} requests, ${x.errors} errors (statuses ${Object.entries(x.statusCodes).map(([c, n]) => `${c}: ${n}`).join(', ')}); ` +
      `RSS ${f1(x.startRssMb)} MB at the start (one request answered), peak ${f1(x.peakRssMb)} MB, ${f1(x.endRssMb)} MB when the load stopped, ` +
      `${x.settled ? 'settled at' : 'still moving at'} ${f1(x.settledRssMb)} MB ${f0(x.settledAfterSeconds)} s later.`,
  ];
}

/** The write mix's table and its check (also what `node dist/bench/idempotency.js` prints). */
export function writesLines(w: WritesResult | null): string[] {
  if (!w) return [];
  const side = (name: string, x: WriteMixSide) =>
    `| ${name} | ${f0(x.reqPerSec)} (${x.runs.map((run) => f0(run.rps)).join(', ')}) | ${f2(x.nodeCpuMsPerReq)} | ${f2(x.pgCpuMsPerReq)} | ${x.errors} |`;
  return [
    '', `Write mix (2 comments to 1 post), ${w.plain.runs.length} paired rotated rounds of ${w.seconds} s, ${w.connections} connections:`, '',
    '| write mix | req/s (median; each round) | Node CPU ms/req | PostgreSQL CPU ms/req | errors |', '|---|---|---:|---:|---:|',
    side('without a key', w.plain),
    side('with Idempotency-Key', w.keyed),
    '',
    `- ${w.pass ? 'PASS' : 'FAIL'}: write mix with an Idempotency-Key <= ${w.goal}x the time per request without: paired median ${fixed(3)(w.ratio)}x (rounds ${w.ratioByRound.map(f2).join(', ')})`,
  ];
}

/** latest.md, from latest.json's object alone (ends with a newline). */
export function renderResults(r: BenchResults): string {
  const m = r.run;
  const d = m.data;
  const lines = [
    '# Benchmark results',
    '',
    `${m.date.slice(0, 10)}, ${m.cores} cores, node ${m.node}${otherHarness(m)}${m.commit ? `, commit ${m.commit.slice(0, 10)}${m.dirty ? ' (with uncommitted changes)' : ''}` : ''}; ` +
      `${d.users} users, ${d.posts} posts, ${d.comments} comments, ${d.tenantPosts} tenant posts over ${d.tenants} tenants; ` +
      `${m.rounds} rotated round(s) of each paired scenario (the first and random pages, GET /posts/:id; one round for the others), ${m.seconds} s each after ${m.warmup} s warm-up, ${m.connections} connections` +
      `${m.rate ? `, every target of the paired scenarios held to ${m.rate} req/s overall (autocannon's overallRate: their req/s is the rate, so they have no ratios)` : ''}` +
      `${m.only ? `; only ${m.only.join(', ')}` : ''}; ` +
      'ratios are paired medians (each round\'s ratio, then the median), req/s and CPU per request medians over the rounds' +
      `${m.bcryptPerSecond !== null ? `; bcrypt cost 12 alone: ${f2(m.bcryptPerSecond)} compares/s` : ''}. ` +
      `Service: \`${m.serviceCommand}\` (npm start), NODE_ENV=production, LOG_LEVEL=${m.logLevel} (the Express reference's too).`,
    ...table(r),
    ...againstBaseline(r),
    ...peakRss(r),
    ...restRss(r),
    ...realtimeTable(r.realtime),
    ...writesLines(r.writes),
    ...soakLines(r.soak),
    '',
    'Targets:',
    ...r.goals.map(goalLine),
    ...(r.others.length ? ['', 'Other checks (earlier goals):', ...r.others.map(goalLine)] : []),
    ...(r.contractProblems.length
      ? ['', 'Contract check problems (results for those routes are not comparable):', ...r.contractProblems.map((p) => `- ${p.target}: ${p.problem}`)]
      : []),
    '',
    `Total run: ${m.totalSeconds.toFixed(0)} s.`,
  ];
  return lines.join('\n') + '\n';
}

/**
 * The summary's table at a fixed rate, where req/s ratios say nothing: each target's latency and
 * Node CPU per request in every scenario, and its req/s where it fell short of the rate.
 */
function fixedRateTable(r: BenchResults, rate: number): string[] {
  const names = ['service', ...r.anchors].filter((n) => r.scenarios.some((s) => s.targets.some((t) => t.name === n)));
  const cell = (t: TargetResult | undefined) =>
    t ? `${f1(t.p50Ms)} / ${f1(t.p99Ms)} · ${f2(t.nodeCpuMsPerReq)}${t.reqPerSec !== null && t.reqPerSec < 0.95 * rate ? ` (${f0(t.reqPerSec)} req/s)` : ''}` : '';
  return [
    `Each cell: p50 / p99 ms · Node CPU ms per request; a target's req/s where it answered less than 95% of the ${rate} req/s asked.`,
    '',
    `| scenario | ${names.map((n) => r.names[n] ?? n).join(' | ')} |`,
    `|---|${names.map(() => '---:|').join('')}`,
    ...r.scenarios.map((s) => `| ${s.label} | ${names.map((n) => cell(s.targets.find((t) => t.name === n))).join(' | ')} |`),
  ];
}

/** The summary's memory line: each target's RSS at rest and its peak (runs that recorded RSS at rest). */
function memoryLine(r: BenchResults): string[] {
  if (!r.restRssMb) return [];
  const shown = (n: string) => r.names[n] ?? n;
  const rest = Object.entries(r.restRssMb).map(([n, x]) => `${shown(n)} ${f0(x.rss)} (${f0(x.anon)} / ${f0(x.file)})`);
  const peak = Object.entries(r.peakRssMb).map(([n, mb]) => `${shown(n)} ${f0(mb)}`);
  return ['', `RSS at rest in MB (anonymous / file-backed): ${rest.join(', ')}.${peak.length ? ` Peak RSS after the load scenarios in MB: ${peak.join(', ')}.` : ''}`];
}

/**
 * The block README.md and docs/performance.md show between `<!-- bench:start -->` and
 * `<!-- bench:end -->` (scripts/doc-blocks.ts), and the blocks of the other runs (Node 26, fixed
 * rate): the run, the service's row of each scenario with its paired ratios against every anchor
 * that ran it (at a fixed rate, every target's latency and CPU instead), RSS at rest and at the
 * peak, and the targets that were judged. A pure function of the results object, as renderResults
 * is; no trailing newline.
 */
export function renderBenchSummary(r: BenchResults): string {
  const m = r.run;
  const shown = (n: string) => r.names[n] ?? n;
  const rows = r.scenarios.flatMap((s) => {
    const service = s.targets.find((t) => t.name === 'service');
    return service ? [{ s, service }] : [];
  });
  const anchors = r.anchors.filter((a) => rows.some(({ service }) => a in service.ratios));
  const options = [
    m.only ? `\`--only ${m.only.join(',')}\`` : 'every scenario',
    `${m.rounds} rotated round(s) of ${m.seconds} s after ${m.warmup} s warm-up`,
    `${m.connections} connections`,
    ...(m.rate ? [`every target held to ${m.rate} req/s overall`] : []),
    ...(m.baseline ? [`baseline \`${m.baseline.ref}\` (${m.baseline.commit.slice(0, 10)})`] : []),
  ];
  const judged = r.goals.filter((g) => g.status === 'PASS' || g.status === 'FAIL');
  const unjudged = r.goals.length - judged.length;
  const table = m.rate
    ? fixedRateTable(r, m.rate)
    : [
        `| scenario | service req/s | ${anchors.map((a) => `× ${shown(a)}`).join(' | ')} | Node / PostgreSQL CPU ms per request | p50 / p99 ms |`,
        `|---|---:|${anchors.map(() => '---:|').join('')}---:|---:|`,
        ...rows.map(({ s, service: t }) =>
          `| ${s.label} | ${f0(t.reqPerSec)} | ${anchors.map((a) => (a in t.ratios ? `${f2(t.ratios[a])}×` : '')).join(' | ')} | ${f2(t.nodeCpuMsPerReq)} / ${f2(t.pgCpuMsPerReq)} | ${f1(t.p50Ms)} / ${f1(t.p99Ms)} |`),
      ];
  return [
    `Run of ${m.date.slice(0, 10)}${m.commit ? ` on commit ${m.commit.slice(0, 10)}${m.dirty ? ' (with uncommitted changes)' : ''}` : ''}, ` +
      `Node ${m.node}${otherHarness(m)}, ${m.cores} cores; ${options.join(', ')}; ${m.rate ? 'req/s ratios do not apply at a fixed rate' : 'ratios are paired medians over the rounds'}.`,
    '',
    ...table,
    ...memoryLine(r),
    '',
    `Targets judged in that run (${judged.filter((g) => g.status === 'PASS').length} PASS, ${judged.filter((g) => g.status === 'FAIL').length} FAIL` +
      `${unjudged ? `; ${unjudged} not judged: scenario not run${m.rate ? ', judged at full load' : ''} or no baseline` : ''}):`,
    '',
    ...judged.map(goalLine),
  ].join('\n');
}
