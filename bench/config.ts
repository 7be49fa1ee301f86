import { availableParallelism } from 'node:os';

/** Benchmark knobs, all from the environment so a quick or a long run needs no code change. */
const num = (name: string, fallback: number) => {
  const raw = process.env[name];
  const n = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number`);
  return n;
};

export const benchConfig = {
  /** Seconds each measured scenario runs. */
  duration: num('BENCH_DURATION', 10),
  /** Rounds per read scenario, the targets' order alternating (mean req/s; CPU per request over all answers). */
  rounds: num('BENCH_ROUNDS', 2),
  /** Seconds of unmeasured load before each scenario (JIT, connection pools, PostgreSQL caches). */
  warmup: num('BENCH_WARMUP', 2),
  /** Concurrent connections of the load generator for the throughput scenarios. */
  connections: num('BENCH_CONNECTIONS', 10),
  /** Concurrent logins during the login storm. */
  stormConnections: num('BENCH_STORM_CONNECTIONS', 8),
  /** Fixed request rate of GET /posts in the "p99 with and without a login storm" pair. */
  stormRate: num('BENCH_STORM_RATE', 50),
  /** Seconds of the bcrypt-alone measurement. */
  bcryptSeconds: num('BENCH_BCRYPT_SECONDS', 5),
  users: num('BENCH_USERS', 1000),
  posts: num('BENCH_POSTS', 20000),
  comments: num('BENCH_COMMENTS', 100000),
  tenantPosts: num('BENCH_TENANT_POSTS', 2000),
  cores: availableParallelism(),
  /** An existing PostgreSQL (a fresh database is created in it and dropped after); else an embedded one. */
  databaseUrl: process.env.BENCH_DATABASE_URL || undefined,
  /** Start the service with `node --cpu-prof` (profile lands in bench/results/prof/). */
  cpuProf: process.env.BENCH_CPU_PROF === '1',
  /** Extra environment for the service, `K=V K2=V2` (experiments: UV_THREADPOOL_SIZE, NODE_OPTIONS). */
  serviceEnv: Object.fromEntries(
    (process.env.BENCH_SERVICE_ENV ?? '').split(/\s+/).filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  ) as Record<string, string>,
  /** Comma-separated scenario keys to run (default: all). */
  only: (process.env.BENCH_ONLY ?? '').split(',').map((s) => s.trim()).filter(Boolean),
};

/** What every seeded user's password is; the seed hashes it once at cost 12. */
export const BENCH_PASSWORD = 'bench-password-1';
export const BENCH_JWT_SECRET = 'bench-secret-bench-secret-bench-secret-0123456789';
/** The service runs with NODE_ENV=production, where /metrics answers only this bearer token (METRICS_TOKEN). */
export const BENCH_METRICS_TOKEN = 'bench-metrics-token-0123456789';
export const metricsHeaders = { authorization: `Bearer ${BENCH_METRICS_TOKEN}` };
export const PER_PAGE = 10;
/** Page size of the trash and the admin user list. */
export const LIST_PER_PAGE = 20;
/** Tenants of the seeded tenant posts (BENCH_TENANT_POSTS of them, spread evenly). */
export const BENCH_TENANTS = 100;

/** Seeded posts whose id is a multiple of this are trashed (so readers know which ids are live). */
export const TRASH_EVERY = 20;

export const userEmail = (i: number) => `user${i}@bench.test`;
