import { availableParallelism } from 'node:os';

/**
 * Command-line options of `npm run bench -- ...`, each winning over its environment variable:
 * `--baseline <git ref>`, `--only <keys or groups>`, `--rounds N`, `--seconds N`, `--warmup N`,
 * `--connections N`, `--rate N`, `--node <path>`, `--soak-seconds N` (also as `--name=value`).
 */
export const BENCH_FLAGS = ['baseline', 'only', 'rounds', 'seconds', 'warmup', 'connections', 'rate', 'node', 'soak-seconds'] as const;
function flag(name: (typeof BENCH_FLAGS)[number], argv: string[] = process.argv.slice(2)): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === `--${name}`) {
      const value = argv[i + 1];
      if (value === undefined || value.startsWith('--')) throw new Error(`--${name} needs a value`);
      return value;
    }
    if (argv[i].startsWith(`--${name}=`)) return argv[i].slice(name.length + 3);
  }
  return undefined;
}

/** Benchmark knobs, from the command line or the environment, so a quick or a long run needs no code change. */
const num = (name: string, fallback: number, cli?: (typeof BENCH_FLAGS)[number]) => {
  const raw = (cli && flag(cli)) ?? process.env[name];
  const n = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${cli ? `--${cli} / ` : ''}${name} must be a non-negative number`);
  return n;
};

/** A positive number, or null when neither the option nor its variable is given: a mode that is off by default. */
const optionalPositive = (name: string, cli: (typeof BENCH_FLAGS)[number]): number | null => {
  const raw = flag(cli) ?? process.env[name];
  if (raw === undefined || raw === '') return null;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${cli} / ${name} must be a positive number`);
  return n;
};

export const benchConfig = {
  /** Seconds each measured scenario runs. */
  duration: num('BENCH_DURATION', 8, 'seconds'),
  /**
   * Rounds of each paired scenario (the first and random pages, GET /posts/:id), the targets'
   * order rotating each round; ratios are paired medians over the rounds. The other scenarios run once.
   */
  rounds: Math.max(1, num('BENCH_ROUNDS', 3, 'rounds')),
  /** `npm run bench:scale`'s rounds and seconds per run (its own defaults, the same variables). */
  scaleRounds: Math.max(1, num('BENCH_ROUNDS', 2)),
  scaleDuration: num('BENCH_DURATION', 10),
  /** Seconds of unmeasured load before each scenario (JIT, connection pools, PostgreSQL caches). */
  warmup: num('BENCH_WARMUP', 2, 'warmup'),
  /** Concurrent connections of the load generator for the throughput scenarios. */
  connections: Math.max(1, num('BENCH_CONNECTIONS', 10, 'connections')),
  /**
   * Fixed-rate mode: every target of the paired page scenarios held to this many requests a second
   * overall (autocannon's overallRate) instead of driven as fast as it answers; null: full load.
   */
  rate: optionalPositive('BENCH_RATE', 'rate'),
  /** Measured seconds of the soak (the whole load; the settling after it comes on top). */
  soakSeconds: num('BENCH_SOAK_SECONDS', 180, 'soak-seconds'),
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
  /** Comma-separated scenario keys or groups to run (default: all); bench/scenarios.ts's `selected` expands them. */
  only: (flag('only') ?? process.env.BENCH_ONLY ?? '').split(',').map((s) => s.trim()).filter(Boolean),
  /** A git ref whose build runs as one more target (`baseline`), built in a temporary worktree. */
  baseline: flag('baseline') ?? (process.env.BENCH_BASELINE || undefined),
  /**
   * The Node binary the service, the baseline and the references run on (another line than the
   * bench's, e.g. 26); default: the bench's own. The load generator stays on the bench's Node.
   */
  node: flag('node') ?? (process.env.BENCH_NODE || undefined),
};

/**
 * LOG_LEVEL of the service and of the Express reference (its access log line is at info, as the
 * service's is), so both do the same logging work.
 */
export const BENCH_LOG_LEVEL = 'warn';
/** What every seeded user's password is; the seed hashes it once at cost 12. */
export const BENCH_PASSWORD = 'bench-password-1';
export const BENCH_JWT_SECRET = 'bench-secret-bench-secret-bench-secret-0123456789';
/** The service runs with NODE_ENV=production, where /metrics answers only this bearer token (METRICS_TOKEN). */
const BENCH_METRICS_TOKEN = 'bench-metrics-token-0123456789';
export const metricsHeaders = { authorization: `Bearer ${BENCH_METRICS_TOKEN}` };
export const PER_PAGE = 10;
/** Page size of the trash and the admin user list. */
export const LIST_PER_PAGE = 20;
/** Tenants of the seeded tenant posts (BENCH_TENANT_POSTS of them, spread evenly). */
export const BENCH_TENANTS = 100;

/**
 * The service's environment as the bench starts it (`npm start` in production): the seeded
 * database, SMTP pointing at a closed loopback port (mail is queued and retried, never sent),
 * no auth rate limit, and no per-address cap on WebSockets (the realtime scenario opens thousands
 * from this one address). `dataDir` is its DATA_DIR: a service announces its URL there, so two
 * services at once get a folder each.
 */
export function serviceEnvironment(databaseUrl: string, dataDir: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    JWT_SECRET: BENCH_JWT_SECRET,
    NODE_ENV: 'production',
    SMTP_URL: 'smtp://127.0.0.1:1',
    APP_URL: 'http://bench.invalid',
    METRICS_TOKEN: BENCH_METRICS_TOKEN,
    AUTH_RATE_LIMIT_PER_MINUTE: '0',
    SUBSCRIPTION_CONNECTIONS_PER_IP: '0',
    LOG_LEVEL: BENCH_LOG_LEVEL,
    DATA_DIR: dataDir,
  };
}

/** Seeded posts whose id is a multiple of this are trashed (so readers know which ids are live). */
export const TRASH_EVERY = 20;

export const userEmail = (i: number) => `user${i}@bench.test`;
