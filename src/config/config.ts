import { z } from 'zod';
import { resolve } from 'node:path';
import { availableParallelism } from 'node:os';
import { readDocumentManifest, type DocumentManifest } from './documents';

/**
 * Every setting the service reads, parsed and checked once at start. Nothing else in src/
 * reads process.env, so this file is the complete list (docs/settings.md mirrors it; test/docs.test.ts checks).
 */
const intSetting = (fallback: number, min = 0) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min))
    .optional()
    .transform((v) => v ?? fallback);

const OTLP_PROTOCOLS = ['http/protobuf', 'http/json', 'grpc'] as const;

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).optional().default('development'),
  PORT: intSetting(3000).pipe(z.number().max(65535, 'must be at most 65535')),
  HOST: z.string().optional().default('0.0.0.0'),
  DATABASE_URL: z.string().url('must be a postgres:// URL').optional(),
  DATABASE_DIRECT_URL: z.string().url('must be a postgres:// URL').optional(),
  DATABASE_PREPARED_STATEMENTS: z.enum(['auto', 'on', 'off'], { error: 'must be auto, on or off' }).optional().default('auto'),
  DATABASE_REPLICA_URLS: z
    .string()
    .optional()
    .default('')
    .transform((v) => v.split(',').map((u) => u.trim()).filter(Boolean))
    .pipe(z.array(z.string().url('each must be a postgres:// URL'))),
  REPLICA_MAX_LAG_MS: intSetting(1000),
  DATA_DIR: z.string().optional().default('.data'),
  JWT_SECRET: z.string().optional(),
  SMTP_URL: z.string().url('must be an smtp:// or smtps:// URL').optional(),
  MAIL_FROM: z.string().optional().default('Blog API <no-reply@localhost>'),
  APP_URL: z.string().url('must be an absolute URL').optional(),
  BCRYPT_COST: intSetting(12, 4).pipe(z.number().max(15, 'must be at most 15')),
  RESET_TOKEN_TTL_MINUTES: intSetting(60, 1),
  TRASH_RETENTION_DAYS: intSetting(30),
  TRASH_RETENTION_FIRST_RUN_MS: intSetting(60_000),
  IDEMPOTENCY_KEY_HOURS: intSetting(24, 1),
  AUTH_RATE_LIMIT_PER_MINUTE: intSetting(300),
  SHUTDOWN_TIMEOUT_MS: intSetting(10_000),
  CORS_ORIGINS: z.string().optional().default(''),
  TRUST_PROXY: intSetting(0),
  SUBSCRIPTION_CONNECTIONS_PER_IP: intSetting(100),
  THREADPOOL_NICE: intSetting(10).pipe(z.number().max(19, 'must be at most 19')),
  MEMORY_RELEASE_IDLE_MS: intSetting(60_000),
  WEB_CONCURRENCY: z
    .string()
    .trim()
    .regex(/^(auto|[1-9]\d*)$/, 'must be a whole number of workers (at least 1) or auto')
    .optional()
    .transform((v) => (v === undefined ? 1 : v === 'auto' ? availableParallelism() : Number(v))),
  PUBLIC_CACHE_SECONDS: intSetting(0).pipe(z.number().max(31_536_000, 'must be at most 31536000 (a year)')),
  REQUIRE_IF_MATCH: z.enum(['true', 'false'], { error: 'must be true or false' }).optional().default('false').transform((v) => v === 'true'),
  GRAPHQL_DOCUMENTS: z.string().optional(),
  GRAPHQL_TRUSTED_DOCUMENTS: z.enum(['off', 'only']).optional().default('off'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional().default('info'),
  METRICS_TOKEN: z.string().optional(),
  // OpenTelemetry: tracing is on when an exporter endpoint is set. The SDK reads its
  // standard variables itself (docs/settings.md lists those it honours); these are checked here so
  // a mistake stops the start with a message naming it rather than a warning in the SDK's log.
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url('must be a URL (http://collector:4318)').optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().url('must be a URL (http://collector:4318/v1/traces)').optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z.enum(OTLP_PROTOCOLS).optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z.enum(OTLP_PROTOCOLS).optional(),
  OTEL_TRACES_SAMPLER: z.enum(['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio']).optional(),
  OTEL_SDK_DISABLED: z.enum(['true', 'false', 'TRUE', 'FALSE', 'True', 'False']).optional(),
  OTEL_SERVICE_NAME: z.string().optional(),
  OTEL_RESOURCE_ATTRIBUTES: z.string().optional(),
  OTEL_LOG_LEVEL: z.enum(['none', 'error', 'warn', 'info', 'debug', 'verbose', 'all', 'NONE', 'ERROR', 'WARN', 'INFO', 'DEBUG', 'VERBOSE', 'ALL']).optional(),
});

export interface Config {
  env: 'development' | 'production' | 'test';
  port: number;
  host: string;
  databaseUrl: string | undefined;
  /**
   * The PostgreSQL server itself, for what needs a session of its own (LISTEN, migrations):
   * DATABASE_DIRECT_URL, else DATABASE_URL. Differs from it behind a pooler.
   */
  databaseDirectUrl: string | undefined;
  /**
   * Whether the statements built once run named (db/named-statements.ts): DATABASE_PREPARED_STATEMENTS
   * `on`/`off`, or `auto`: on unless DATABASE_DIRECT_URL names another server than DATABASE_URL
   * (a pooler, which may run a named statement on another server connection).
   */
  preparedStatements: boolean;
  /** Read replicas (streaming standbys of DATABASE_URL), named replica-1, replica-2, ... in this order. */
  replicaUrls: string[];
  /** A replica further behind than this is skipped until it catches up (db/replicas.ts). */
  replicaMaxLagMs: number;
  dataDir: string;
  /** Undefined only before main() has generated the development secret. */
  jwtSecret: string | undefined;
  smtpUrl: string | undefined;
  mailFrom: string;
  appUrl: string;
  bcryptCost: number;
  resetTokenTtlMinutes: number;
  trashRetentionDays: number;
  /** How long a create's answer is kept for a repeat with its Idempotency-Key. */
  idempotencyKeyHours: number;
  authRateLimitPerMinute: number;
  shutdownTimeoutMs: number;
  corsOrigins: string[];
  /** Proxy hops in front of the service whose X-Forwarded-For is believed (client IP for rate limits). */
  trustProxy: number;
  /** Open GraphQL WebSocket connections one client IP may hold; 0 = no limit. */
  subscriptionConnectionsPerIp: number;
  /** Niceness of libuv's thread pool (bcrypt) relative to the event loop; 0 leaves it alone. */
  threadpoolNice: number;
  /** Idle time after which the heap's spare memory goes back to the system (core/heap.ts); 0 = never. */
  memoryReleaseIdleMs: number;
  logLevel: string;
  /** max-age of public reads (GET /posts, GET /posts/:id, anonymous GraphQL GET queries); 0 = revalidate each time. */
  publicCacheSeconds: number;
  /** A write to an existing post, comment or user without If-Match (GraphQL `ifMatch`) answers 428. */
  requireIfMatch: boolean;
  /** The trusted documents manifest (GRAPHQL_DOCUMENTS), read and checked at start. */
  graphqlDocuments: DocumentManifest | undefined;
  /** `only`: GraphQL runs manifest documents only (graphql/documents.ts). */
  graphqlTrustedDocuments: 'off' | 'only';
  /**
   * The bearer token the scraper sends for /metrics. Without it /metrics is open in
   * development and not served at all in production.
   */
  metricsToken: string | undefined;
  /**
   * OpenTelemetry traces: on when OTEL_EXPORTER_OTLP_ENDPOINT or
   * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (and OTEL_SDK_DISABLED is not true). The service
   * name is OTEL_SERVICE_NAME, else `service.name` of OTEL_RESOURCE_ATTRIBUTES, else blog-api.
   */
  tracing: { enabled: boolean; serviceName: string | undefined; sdkLogLevel: string | undefined };
  /** HTTP worker processes sharing the port (node:cluster); 1 runs the server in the one process. */
  webConcurrency: number;
  /** Started by an npm script (`npm start`): the process stops when npm is gone (main.ts watchParent). */
  underNpm: boolean;
  /**
   * The mail outbox's safety poll (it is woken by the NOTIFY of each queued mail, modules/mail)
   * and the first retry delay; tests shorten them.
   */
  mailPollMs: number;
  mailRetryBaseMs: number;
  /**
   * The trash retention job's first run after start (then hourly): soon, so that instances
   * restarted more often than hourly still purge, but past the start's own burst of work.
   */
  trashRetentionFirstRunMs: number;
}

export class ConfigError extends Error {}

/** Treats empty strings as unset, so `FOO= npm start` means "default". */
function clean(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && v !== '') out[k] = v;
  return out;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const parsed = envSchema.safeParse(clean(env));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid settings:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  const production = e.NODE_ENV === 'production';
  if (production) {
    const missing: string[] = [];
    if (!e.JWT_SECRET || e.JWT_SECRET.length < 32) missing.push('JWT_SECRET (at least 32 characters)');
    if (!e.SMTP_URL) missing.push('SMTP_URL');
    if (!e.APP_URL) missing.push('APP_URL');
    if (missing.length) throw new ConfigError(`NODE_ENV=production needs: ${missing.join(', ')}`);
  } else if (e.JWT_SECRET !== undefined && e.JWT_SECRET.length < 32) {
    throw new ConfigError('JWT_SECRET: must be at least 32 characters');
  }
  if (e.DATABASE_REPLICA_URLS.length && !e.DATABASE_URL) {
    throw new ConfigError('DATABASE_REPLICA_URLS: needs DATABASE_URL (replicas are standbys of a primary you run, not of the embedded database)');
  }
  if (e.DATABASE_DIRECT_URL && !e.DATABASE_URL) {
    throw new ConfigError('DATABASE_DIRECT_URL: needs DATABASE_URL (the direct URL is the server behind the pooler DATABASE_URL names)');
  }
  const databaseDirectUrl = e.DATABASE_DIRECT_URL ?? e.DATABASE_URL;
  if (e.GRAPHQL_TRUSTED_DOCUMENTS === 'only' && !e.GRAPHQL_DOCUMENTS) {
    throw new ConfigError('GRAPHQL_TRUSTED_DOCUMENTS=only: needs GRAPHQL_DOCUMENTS (the manifest of the documents that may run)');
  }
  let graphqlDocuments: DocumentManifest | undefined;
  try {
    graphqlDocuments = e.GRAPHQL_DOCUMENTS === undefined ? undefined : readDocumentManifest(e.GRAPHQL_DOCUMENTS);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  return Object.freeze({
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    databaseDirectUrl,
    preparedStatements: e.DATABASE_PREPARED_STATEMENTS === 'auto' ? databaseDirectUrl === e.DATABASE_URL : e.DATABASE_PREPARED_STATEMENTS === 'on',
    replicaUrls: e.DATABASE_REPLICA_URLS,
    replicaMaxLagMs: e.REPLICA_MAX_LAG_MS,
    dataDir: resolve(e.DATA_DIR),
    jwtSecret: e.JWT_SECRET,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    appUrl: (e.APP_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    bcryptCost: e.BCRYPT_COST,
    resetTokenTtlMinutes: e.RESET_TOKEN_TTL_MINUTES,
    trashRetentionDays: e.TRASH_RETENTION_DAYS,
    idempotencyKeyHours: e.IDEMPOTENCY_KEY_HOURS,
    authRateLimitPerMinute: e.AUTH_RATE_LIMIT_PER_MINUTE,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    corsOrigins: e.CORS_ORIGINS.split(',').map((s) => s.trim()).filter(Boolean),
    trustProxy: e.TRUST_PROXY,
    subscriptionConnectionsPerIp: e.SUBSCRIPTION_CONNECTIONS_PER_IP,
    threadpoolNice: e.THREADPOOL_NICE,
    memoryReleaseIdleMs: e.MEMORY_RELEASE_IDLE_MS,
    logLevel: e.LOG_LEVEL,
    publicCacheSeconds: e.PUBLIC_CACHE_SECONDS,
    requireIfMatch: e.REQUIRE_IF_MATCH,
    graphqlDocuments,
    graphqlTrustedDocuments: e.GRAPHQL_TRUSTED_DOCUMENTS,
    metricsToken: e.METRICS_TOKEN,
    tracing: Object.freeze({
      enabled: Boolean(e.OTEL_EXPORTER_OTLP_ENDPOINT || e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) && e.OTEL_SDK_DISABLED?.toLowerCase() !== 'true',
      // The SDK takes OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES itself; ours is only the fallback.
      serviceName: (e.OTEL_SERVICE_NAME || /(^|,)\s*service\.name\s*=/.test(e.OTEL_RESOURCE_ATTRIBUTES ?? '')) ? undefined : 'blog-api',
      // Set: the SDK prints its own diagnostics at that level; unset: its warnings go to our log.
      sdkLogLevel: e.OTEL_LOG_LEVEL,
    }),
    webConcurrency: e.WEB_CONCURRENCY,
    // Set by npm for the scripts it runs; not a setting of ours, so not in the schema above.
    underNpm: Boolean(env.npm_lifecycle_event),
    mailPollMs: 10_000,
    mailRetryBaseMs: 5000,
    trashRetentionFirstRunMs: e.TRASH_RETENTION_FIRST_RUN_MS,
  });
}
