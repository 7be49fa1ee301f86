import autocannon, { type Options, type Result } from 'autocannon';
import { BENCH_PASSWORD, PER_PAGE, TRASH_EVERY, benchConfig, userEmail } from './config';
import { sampleRss, type Target } from './processes';
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
  statusCodes: Record<string, number>;
}

export interface Scenario {
  key: string;
  label: string;
  run(target: Target, sql: SqlStats): Promise<Measurement>;
}

const rand = (n: number) => 1 + Math.floor(Math.random() * n);
const livePosts = benchConfig.posts - Math.floor(benchConfig.posts / TRASH_EVERY);
const lastPage = Math.max(1, Math.ceil(livePosts / PER_PAGE));
const json = { 'content-type': 'application/json' };

/** A random post id that the seed did not trash. */
function liveId(): number {
  const id = rand(benchConfig.posts);
  return id % TRASH_EVERY === 0 ? id - 1 : id;
}

export const POSTS_QUERY = `query Posts($page: Int) { posts(page: $page) {
  data { id title slug body published publishedAt createdAt user { id name } comments { id body user { id name } } commentsCount }
  total perPage currentPage lastPage } }`;

type Req = { method: string; path: string; headers?: Record<string, string>; body?: string };

const listPosts = (): Req => ({ method: 'GET', path: `/posts?page=${rand(lastPage)}` });
const graphqlPosts = (): Req => ({
  method: 'POST', path: '/graphql', headers: json,
  body: JSON.stringify({ query: POSTS_QUERY, variables: { page: rand(lastPage) } }),
});
const showPost = (): Req => ({ method: 'GET', path: `/posts/${liveId()}` });
const login = (): Req => ({
  method: 'POST', path: '/auth/login', headers: json,
  body: JSON.stringify({ email: userEmail(rand(benchConfig.users)), password: BENCH_PASSWORD }),
});
let serial = 0;
const createPost = (token: string): Req => ({
  method: 'POST', path: '/posts', headers: { ...json, authorization: `Bearer ${token}` },
  body: JSON.stringify({ title: `Bench post ${process.pid}-${++serial}-${Math.random().toString(36).slice(2, 8)}`, body: 'Written under load. '.repeat(20) }),
});
const addComment = (token: string): Req => ({
  method: 'POST', path: `/posts/${liveId()}/comments`, headers: { ...json, authorization: `Bearer ${token}` },
  body: JSON.stringify({ body: 'A comment written under load.' }),
});

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

function summarise(r: Result, statements: number | null, rssMb: number): Measurement {
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
    errors: r.errors + r.non2xx, // autocannon's `errors` already includes timeouts
    responses,
    sqlPerRequest: statements === null || responses === 0 ? null : statements / responses,
    rssMb,
    statusCodes,
  };
}

/** Warm-up, then the measured run with SQL counted and RSS sampled. `extra` runs alongside (the storm). */
async function measure(
  target: Target,
  sql: SqlStats,
  build: (duration: number) => Options,
  alongside?: (duration: number) => Options,
): Promise<Measurement> {
  if (benchConfig.warmup > 0) {
    await Promise.all([autocannon(build(benchConfig.warmup)), alongside && autocannon(alongside(benchConfig.warmup))]);
  }
  await sql.reset();
  const stopRss = sampleRss(target.pid);
  const [main, side] = await Promise.all([autocannon(build(benchConfig.duration)), alongside && autocannon(alongside(benchConfig.duration))]);
  const rss = stopRss();
  const statements = await sql.total();
  const m = summarise(main, null, rss);
  // Statements are shared by both loads of a storm run; divide by all of their responses.
  const all = m.responses + (side ? summarise(side, null, 0).responses : 0);
  m.sqlPerRequest = statements === null || all === 0 ? null : statements / all;
  return m;
}

/** Logs in a few seeded users on this target for the write scenarios. */
async function tokensFor(target: Target, count: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      try {
        const res = await fetch(`${target.url}/auth/login`, {
          method: 'POST', headers: json, body: JSON.stringify({ email: userEmail(i + 1), password: BENCH_PASSWORD }),
        });
        const body = (await res.json().catch(() => ({}))) as { token?: string };
        return body.token ?? 'no-token';
      } catch {
        return 'no-token'; // the writes then answer 401 and show up as errors
      }
    }),
  );
}

const storm = (target: Target) =>
  options(target, login, { connections: benchConfig.stormConnections });
const paced = (target: Target) =>
  options(target, listPosts, { connections: 4, overallRate: benchConfig.stormRate });

export const scenarios: Scenario[] = [
  { key: 'list', label: 'REST GET /posts?page=N', run: (t, s) => measure(t, s, options(t, listPosts)) },
  { key: 'graphql', label: 'GraphQL posts(page: N)', run: (t, s) => measure(t, s, options(t, graphqlPosts)) },
  { key: 'show', label: 'REST GET /posts/:id', run: (t, s) => measure(t, s, options(t, showPost)) },
  { key: 'login', label: 'POST /auth/login (cost 12)', run: (t, s) => measure(t, s, options(t, login)) },
  {
    key: 'mix',
    label: 'mix 80% read / 15% write / 5% login',
    run: async (t, s) => measure(t, s, options(t, mixed(await tokensFor(t, 20)))),
  },
  {
    key: 'calm',
    label: `GET /posts at ${benchConfig.stormRate} req/s, alone`,
    run: (t, s) => measure(t, s, paced(t)),
  },
  {
    key: 'storm',
    label: `GET /posts at ${benchConfig.stormRate} req/s, during a login storm (${benchConfig.stormConnections} conns)`,
    run: (t, s) => measure(t, s, paced(t), storm(t)),
  },
];
