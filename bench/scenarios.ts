import autocannon, { type Options, type Result } from 'autocannon';
import jwt from 'jsonwebtoken';
import { BENCH_JWT_SECRET, BENCH_PASSWORD, BENCH_TENANTS, LIST_PER_PAGE, PER_PAGE, TRASH_EVERY, benchConfig, userEmail } from './config';
import { cpuTicks, postgresTicks, sampleRss, TICK_MS, waitIdle, type Target } from './processes';
import { call } from './http';
import type { SqlStats } from './sql-stats';

/** One measured scenario against one target. */
export interface Measurement {
  rps: number;
  p50: number;
  p99: number;
  /** Connection errors, timeouts and non-2xx answers. */
  errors: number;
  responses: number;
  sqlPerRequest: number | null;
  rssMb: number;
  /** CPU of the target's process per answered request (ms), from /proc. */
  nodeMs: number;
  /** CPU of PostgreSQL (all its processes) per answered request (ms); NaN when not measurable. */
  pgMs: number;
  statusCodes: Record<string, number>;
}

export interface Scenario {
  key: string;
  label: string;
  /** Which targets run it besides the service, in that order (default: the raw reference). A baseline joins every scenario but the paced pair. */
  peers?: string[];
  /** Run in benchConfig.rounds rotated rounds and compared as paired medians (else one round). */
  paired?: boolean;
  /** `round` > 0: the same requests again, so SQL per request (the same every round) is not counted again. */
  run(target: Target, sql: SqlStats, round: number): Promise<Measurement>;
}

const rand = (n: number) => 1 + Math.floor(Math.random() * n);
const livePosts = benchConfig.posts - Math.floor(benchConfig.posts / TRASH_EVERY);
export const lastPage = Math.max(1, Math.ceil(livePosts / PER_PAGE));
// A fresh object each time: autocannon writes Content-Length into the headers object it is given.
const json = () => ({ 'content-type': 'application/json' });

/** A random post id that the seed did not trash. */
function liveId(): number {
  const id = rand(benchConfig.posts);
  return id % TRASH_EVERY === 0 ? id - 1 : id;
}

const POSTS_QUERY = `query Posts($page: Int) { posts(page: $page) {
  data { id title slug body published publishedAt createdAt user { id name } comments { id body user { id name } } commentsCount }
  total perPage currentPage lastPage } }`;

/**
 * The same page asked of PostGraphile in its own schema: live posts newest first with author,
 * comments oldest first with their authors, the comment count and the total.
 */
export const POSTGRAPHILE_POSTS_QUERY = `query Posts($offset: Int) {
  allPosts(first: ${PER_PAGE}, offset: $offset, orderBy: [CREATED_AT_DESC, ID_DESC], condition: { deletedAt: null }) {
    nodes { id title slug body published publishedAt createdAt userByUserId { id name }
      commentsByPostId(orderBy: [CREATED_AT_ASC, ID_ASC]) { nodes { id body userByUserId { id name } } totalCount } }
    totalCount } }`;

/**
 * The same page asked of PostGraphile 5 (bench/postgraphile5: Amber preset, simplify-inflection):
 * `allPosts` is `posts`, relations are named after the table (`user`, `comments`), and the Node
 * interface owns `id`, so the primary keys are `rowId`.
 */
export const POSTGRAPHILE5_POSTS_QUERY = `query Posts($offset: Int) {
  posts(first: ${PER_PAGE}, offset: $offset, orderBy: [CREATED_AT_DESC, ROW_ID_DESC], condition: { deletedAt: null }) {
    nodes { rowId title slug body published publishedAt createdAt user { rowId name }
      comments(orderBy: [CREATED_AT_ASC, ROW_ID_ASC]) { nodes { rowId body user { rowId name } } totalCount } }
    totalCount } }`;

export type Req = { method: string; path: string; headers?: Record<string, string>; body?: string };

export const listPosts = (): Req => ({ method: 'GET', path: `/posts?page=${rand(lastPage)}` });
/** The page clients load most: where Node time, not PostgreSQL's, decides. */
export const firstPage = (): Req => ({ method: 'GET', path: '/posts?page=1' });
export const graphqlPosts = (page = rand(lastPage)): Req => ({
  method: 'POST', path: '/graphql', headers: json(),
  body: JSON.stringify({ query: POSTS_QUERY, variables: { page } }),
});
/** The GraphQL page request of each GraphQL peer, page `page` (random when not given). */
export const peerPosts = (query: string) => (page = rand(lastPage)): Req => ({
  method: 'POST', path: '/graphql', headers: json(),
  body: JSON.stringify({ query, variables: { offset: (page - 1) * PER_PAGE } }),
});
const postgraphilePosts = peerPosts(POSTGRAPHILE_POSTS_QUERY);
const postgraphile5Posts = peerPosts(POSTGRAPHILE5_POSTS_QUERY);
/** Which request each target of a GraphQL scenario gets (page `page`, random when not given): the service's query, or its peer's own. */
const graphqlFor = (t: Target, page?: number): (() => Req) =>
  t.name === 'postgraphile' ? () => postgraphilePosts(page) : t.name === 'postgraphile5' ? () => postgraphile5Posts(page) : () => graphqlPosts(page);
export const showPost = (): Req => ({ method: 'GET', path: `/posts/${liveId()}` });
const simplePosts = (): Req => ({ method: 'GET', path: `/posts?paginate=simple&page=${rand(lastPage)}` });
/** A `next` cursor at a random live position, encoded as the service encodes it. */
const cursorPosts = (): Req => ({
  method: 'GET',
  path: `/posts?paginate=cursor&cursor=${Buffer.from(JSON.stringify({ id: rand(benchConfig.posts), to: 'next' })).toString('base64url')}`,
});
/** A seeded user's access token, signed as the service signs them (no login needed). */
export const tokenOf = (id: number) => jwt.sign({ id, tv: 0 }, BENCH_JWT_SECRET, { algorithm: 'HS256', expiresIn: '1d' });
/** Seeded user 1 is an admin, user 2 a moderator (bench/seed.ts); both targets accept these tokens. */
const bearer = (id: number) => ({ authorization: `Bearer ${tokenOf(id)}` });
const moderator = bearer(2);
const admin = bearer(1);
const trashed = Math.floor(benchConfig.posts / TRASH_EVERY);
const trashList = (): Req => ({ method: 'GET', path: `/trash?page=${rand(Math.max(1, Math.ceil(trashed / LIST_PER_PAGE)))}`, headers: { ...moderator } });
const adminUsers = (): Req => ({ method: 'GET', path: `/admin/users?page=${rand(Math.max(1, Math.ceil(benchConfig.users / LIST_PER_PAGE)))}`, headers: { ...admin } });
const tenantList = (): Req => ({ method: 'GET', path: '/tenant/posts', headers: { 'x-tenant-id': String(rand(BENCH_TENANTS)) } });
const login = (): Req => ({
  method: 'POST', path: '/auth/login', headers: json(),
  body: JSON.stringify({ email: userEmail(rand(benchConfig.users)), password: BENCH_PASSWORD }),
});
let serial = 0;
export const createPost = (token: string): Req => ({
  method: 'POST', path: '/posts', headers: { ...json(), authorization: `Bearer ${token}` },
  body: JSON.stringify({ title: `Bench post ${process.pid}-${++serial}-${Math.random().toString(36).slice(2, 8)}`, body: 'Written under load. '.repeat(20) }),
});
export const addComment = (token: string): Req => ({
  method: 'POST', path: `/posts/${liveId()}/comments`, headers: { ...json(), authorization: `Bearer ${token}` },
  body: JSON.stringify({ body: 'A comment written under load.' }),
});

/** A new account (a fresh email each time): the service queues its verification mail. */
export const register = (): Req => ({
  method: 'POST', path: '/auth/register', headers: json(),
  body: JSON.stringify({ name: 'Bench reader', email: `reader-${process.pid}-${++serial}-${Math.random().toString(36).slice(2, 8)}@bench.test`, password: BENCH_PASSWORD }),
});

/**
 * The one request a target answers before its RSS at rest is read (bench/run.ts): the REST first
 * page (the page clients load first), or for the GraphQL peers, which serve no REST, the
 * GraphQL page in their own schema.
 */
export function firstRequests(name: string): Req[] {
  if (name === 'postgraphile') return [postgraphilePosts(1)];
  if (name === 'postgraphile5') return [postgraphile5Posts(1)];
  return [firstPage()];
}

/** Request makers by key, for bench/ab.ts (A/B of builds). */
export const requestMakers: Record<string, () => Req> = {
  'list-first': firstPage, 'graphql-first': () => graphqlPosts(1), list: listPosts, graphql: () => graphqlPosts(), show: showPost, simple: simplePosts, cursor: cursorPosts, trash: trashList, admin: adminUsers, tenant: tenantList,
};

/** 80% reads (45 list, 35 detail), 15% writes (10 comments, 5 posts) with bearer tokens, 5% logins. */
function mixed(tokens: string[]): () => Req {
  return () => {
    const r = Math.random();
    const token = tokens[Math.floor(Math.random() * tokens.length)];
    if (r < 0.45) return listPosts();
    if (r < 0.8) return showPost();
    if (r < 0.9) return addComment(token);
    if (r < 0.95) return createPost(token);
    return login();
  };
}

function options(target: Target, next: () => Req, extra: Partial<Options> = {}): (duration: number) => Options {
  return (duration) => ({
    url: target.url,
    connections: benchConfig.connections,
    duration,
    timeout: 30,
    requests: [{ setupRequest: (req) => ({ ...req, ...next() }) }],
    ...extra,
  });
}

function summarise(r: Result, sqlPerRequest: number | null, rssMb: number, cpu: { node: number; pg: number }, expected?: number): Measurement {
  const statusCodes: Record<string, number> = {};
  let responses = 0;
  for (const [code, { count }] of Object.entries(r.statusCodeStats ?? {})) {
    statusCodes[code] = Number(count);
    responses += Number(count);
  }
  return {
    rps: responses / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    // autocannon's `errors` already includes timeouts; a revalidation scenario expects its 304s.
    errors: expected === undefined ? r.errors + r.non2xx : r.errors + responses - (statusCodes[expected] ?? 0),
    responses,
    sqlPerRequest,
    rssMb,
    nodeMs: (cpu.node * TICK_MS) / Math.max(1, responses),
    pgMs: (cpu.pg * TICK_MS) / Math.max(1, responses),
    statusCodes,
  };
}

/**
 * SQL statements per request: a few requests one at a time after the load (so none is abandoned
 * half-way), minus what the background jobs ran meanwhile (sql.backgroundPerSecond).
 */
async function sqlPerRequest(target: Target, sql: SqlStats, next: () => Req): Promise<number | null> {
  await sql.reset();
  const started = Date.now();
  let n = 0;
  while (n < 20 && (n < 3 || Date.now() - started < 3000)) {
    const r = next();
    await call(target.url, r.method, r.path, { headers: r.headers, body: r.body });
    n++;
  }
  const total = await sql.total();
  if (total === null) return null;
  return Math.max(0, total - sql.backgroundPerSecond * ((Date.now() - started) / 1000)) / n;
}

/**
 * Revalidations of public reads (304): `count` random requests of `make` are asked once for their
 * ETag; the scenario then sends them again with If-None-Match, so the service answers 304 (nothing
 * changes during the run). Only a 304 counts as an answer, anything else as an error.
 */
async function revalidations(target: Target, make: () => Req, count = 200): Promise<() => Req> {
  const tagged: Req[] = [];
  for (let i = 0; i < count; i++) {
    const r = make();
    const res = await call(target.url, r.method, r.path, { headers: r.headers });
    const tag = res.headers.etag;
    if (res.status !== 200 || typeof tag !== 'string') throw new Error(`${target.name}: ${r.path} → ${res.status} without an ETag`);
    tagged.push({ ...r, headers: { ...r.headers, 'if-none-match': tag } });
  }
  let i = 0;
  return () => {
    const r = tagged[i++ % tagged.length];
    return { ...r, headers: { ...r.headers } };
  };
}

/** Warm-up, the measured run with RSS sampled, then SQL per request. `alongside` runs with it (the storm). */
async function measure(
  target: Target,
  sql: SqlStats,
  next: () => Req,
  extra: Partial<Options> = {},
  alongside?: (duration: number) => Options,
  expected?: number,
  countSql = true,
): Promise<Measurement> {
  const build = options(target, next, extra);
  const phase = (what: string) => process.env.BENCH_VERBOSE === '1' && process.stderr.write(`  [${new Date().toISOString().slice(11, 19)} ${target.name}] ${what}\n`);
  // PostgreSQL idle too: a deep page the previous target's run abandoned at its end still runs
  // there (PostGraphile 5's take seconds), and would land on whichever target comes next.
  const pgIdle = sql.postmaster === null ? [] : [() => postgresTicks(sql.postmaster!)];
  await waitIdle([target.pid], 30_000, pgIdle);
  phase('warm-up');
  if (benchConfig.warmup > 0) {
    await Promise.all([autocannon(build(benchConfig.warmup)), alongside && autocannon(alongside(benchConfig.warmup))]);
    await waitIdle([target.pid], 30_000, pgIdle);
  }
  phase('measure');
  const stopRss = sampleRss(target.pid);
  const pgNow = () => (sql.postmaster === null ? NaN : postgresTicks(sql.postmaster));
  const node0 = cpuTicks(target.pid);
  const pg0 = pgNow();
  const [main] = await Promise.all([autocannon(build(benchConfig.duration)), alongside && autocannon(alongside(benchConfig.duration))]);
  const cpu = { node: cpuTicks(target.pid) - node0, pg: pgNow() - pg0 };
  const rss = stopRss();
  phase('drain');
  await waitIdle([target.pid], 30_000, pgIdle); // requests abandoned at the end still run: let them finish first
  phase('count SQL');
  return summarise(main, countSql ? await sqlPerRequest(target, sql, next) : null, rss, cpu, expected);
}

/** Logs in a few seeded users on this target for the write scenarios (a failed login is retried). */
async function tokensFor(target: Target, count: number): Promise<string[]> {
  const one = async (email: string): Promise<string> => {
    let last = '';
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const res = await call(target.url, 'POST', '/auth/login', { headers: json(), body: JSON.stringify({ email, password: BENCH_PASSWORD }) });
        if (typeof res.body?.token === 'string') return res.body.token;
        last = `status ${res.status}`;
      } catch (err) {
        last = String((err as { cause?: unknown }).cause ?? err);
      }
    }
    throw new Error(`${target.name}: login of ${email} failed (${last})`);
  };
  return Promise.all(Array.from({ length: count }, (_, i) => one(userEmail(i + 1))));
}

const storm = (target: Target) => options(target, login, { connections: benchConfig.stormConnections });
const paced = { connections: 4, overallRate: benchConfig.stormRate };

/** The REST reads: each against its Express reference and the raw one. */
const rest = ['express', 'raw'];

const graphqlPeers = ['raw', 'postgraphile', 'postgraphile5'];
/** Paired scenarios count SQL in their first round only. */
const once = (round: number) => round === 0;
/**
 * The paired page scenarios' load: as fast as each target answers, or in fixed-rate mode
 * (`--rate`) one overall rate for every target, so that each does the same work and what differs is
 * latency, CPU per request and memory.
 */
const pageLoad: Partial<Options> = benchConfig.rate === null ? {} : { overallRate: benchConfig.rate };

export const scenarios: Scenario[] = [
  { key: 'list-first', label: 'REST GET /posts?page=1', peers: rest, paired: true, run: (t, s, r) => measure(t, s, firstPage, pageLoad, undefined, undefined, once(r)) },
  { key: 'list', label: 'REST GET /posts?page=N (random)', peers: rest, paired: true, run: (t, s, r) => measure(t, s, listPosts, pageLoad, undefined, undefined, once(r)) },
  {
    key: 'graphql-first',
    label: 'GraphQL posts(page: 1)',
    peers: graphqlPeers,
    paired: true,
    run: (t, s, r) => measure(t, s, graphqlFor(t, 1), pageLoad, undefined, undefined, once(r)),
  },
  {
    key: 'graphql',
    label: 'GraphQL posts(page: N) (random)',
    peers: graphqlPeers,
    paired: true,
    run: (t, s, r) => measure(t, s, graphqlFor(t), pageLoad, undefined, undefined, once(r)),
  },
  { key: 'show', label: 'REST GET /posts/:id', peers: rest, paired: true, run: (t, s, r) => measure(t, s, showPost, pageLoad, undefined, undefined, once(r)) },
  // The same reads revalidated by a cache that holds them (304, no body): what a 304 costs next to the full answer.
  { key: 'list304', label: 'REST GET /posts?page=N, revalidated (304)', peers: [], run: async (t, s) => measure(t, s, await revalidations(t, listPosts), {}, undefined, 304) },
  { key: 'show304', label: 'REST GET /posts/:id, revalidated (304)', peers: [], run: async (t, s) => measure(t, s, await revalidations(t, showPost), {}, undefined, 304) },
  { key: 'simple', label: 'REST GET /posts?paginate=simple&page=N', peers: rest, run: (t, s) => measure(t, s, simplePosts) },
  { key: 'cursor', label: 'REST GET /posts?paginate=cursor&cursor=C', peers: rest, run: (t, s) => measure(t, s, cursorPosts) },
  { key: 'trash', label: 'REST GET /trash?page=N (moderator)', peers: rest, run: (t, s) => measure(t, s, trashList) },
  { key: 'tenant', label: `REST GET /tenant/posts (${BENCH_TENANTS} tenants)`, peers: rest, run: (t, s) => measure(t, s, tenantList) },
  { key: 'admin', label: 'REST GET /admin/users?page=N (admin)', peers: rest, run: (t, s) => measure(t, s, adminUsers) },
  { key: 'login', label: 'POST /auth/login (cost 12)', run: (t, s) => measure(t, s, login) },
  {
    key: 'mix',
    label: 'mix 80% read / 15% write / 5% login',
    run: async (t, s) => measure(t, s, mixed(await tokensFor(t, 20))),
  },
  {
    key: 'calm',
    label: `GET /posts at ${benchConfig.stormRate} req/s, alone`,
    run: (t, s) => measure(t, s, listPosts, paced),
  },
  {
    key: 'storm',
    label: `GET /posts at ${benchConfig.stormRate} req/s, during a login storm (${benchConfig.stormConnections} conns)`,
    run: (t, s) => measure(t, s, listPosts, paced, storm(t)),
  },
];

/** Names for sets of scenarios in `--only` (besides each scenario's key, `realtime`, `writes` and `soak`). */
const scenarioGroups: Record<string, string[]> = {
  first: ['list-first', 'graphql-first'],
  random: ['list', 'graphql'],
  pages: ['list-first', 'list', 'graphql-first', 'graphql', 'show'],
  rest: ['list-first', 'list', 'show'],
  gql: ['graphql-first', 'graphql'],
};

/** Keys of what runs outside the table's scenarios: bench/realtime.ts, bench/idempotency.ts, bench/soak.ts. */
const OWN_RUNS = ['realtime', 'writes', 'soak'];

/** `--only` expanded to scenario keys (and `realtime`, `writes`, `soak`); empty: everything. Unknown names are an error. */
export function selected(only: string[]): Set<string> | null {
  if (!only.length) return null;
  const keys = new Set<string>();
  for (const name of only) {
    if (scenarioGroups[name]) for (const k of scenarioGroups[name]) keys.add(k);
    else if (OWN_RUNS.includes(name) || scenarios.some((s) => s.key === name)) keys.add(name);
    else throw new Error(`--only: no scenario or group "${name}" (scenarios: ${[...scenarios.map((s) => s.key), ...OWN_RUNS].join(', ')}; groups: ${Object.keys(scenarioGroups).join(', ')})`);
  }
  return keys;
}
