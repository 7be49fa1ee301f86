import pino, { type DestinationStream, type Logger as PinoLogger } from 'pino';
import { DriverException } from '@mikro-orm/core';

/**
 * The logging surface the code uses. main.ts supplies pino; tests pass a quiet one (or a pino
 * logger writing to memory). Kept this small so any structured logger fits.
 */
export interface Logger {
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  debug(obj: object | string, msg?: string): void;
  /** Whether a line at this level would be written (pino has it): callers may skip building it. */
  isLevelEnabled?(level: string): boolean;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {}, debug() {} };

/**
 * Secrets that must never reach a log line, wherever a caller puts them. The request log builds
 * its own line from safe fields; this list is the net under every other call.
 */
const REDACTED_PATHS = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  'password',
  'token',
  'secret',
  'jwtSecret',
  'metricsToken',
  '*.authorization',
  '*.password',
  '*.token',
  '*.secret',
  '*.jwtSecret',
  '*.metricsToken',
  '*.smtpUrl',
  'variables.password',
  'variables.token',
];

export interface PinoOptions {
  level?: string;
  /** Human-readable lines (pino-pretty) instead of JSON. */
  pretty?: boolean;
  /** Where lines go; stdout by default. Tests pass an in-memory stream. */
  stream?: DestinationStream;
  /** Fields added to every line (tracing's trace_id and span_id: core/tracing.ts); a line's own fields win. */
  mixin?: () => object;
}

/**
 * The service's logger: JSON lines (one object a line), secrets redacted, errors serialised
 * without the SQL and values that database errors carry (serializeError below).
 */
export function createPinoLogger(opts: PinoOptions = {}): PinoLogger {
  const options = {
    level: opts.level ?? 'info',
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
    serializers: { err: serializeError },
    ...(opts.mixin ? { mixin: opts.mixin } : {}),
  };
  const stream = opts.stream ?? (opts.pretty ? prettyStream() : undefined);
  return stream ? pino(options, stream) : pino(options);
}

/** pino-pretty is loaded only when asked for (development on a terminal): production never uses it. */
function prettyStream(): DestinationStream {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- because the logger is built synchronously and a static import would load pino-pretty in production too
  const pretty = require('pino-pretty') as typeof import('pino-pretty');
  return pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
}

/** Development on a terminal reads pretty lines; anything else (files, collectors, production) gets JSON. */
export function wantsPrettyLogs(env: string, isTty = Boolean(process.stdout.isTTY)): boolean {
  return env === 'development' && isTty;
}

/**
 * How errors reach a log line. Database errors carry the failed statement with its values
 * inlined (the driver prefixes it to the message, MikroORM appends PostgreSQL's `detail`, which
 * quotes the offending row, and the stack repeats both), so a failed insert of a mail or an
 * update of a password would put a reset secret or a bcrypt hash in the logs. They are logged
 * from a whitelist instead; every other error keeps pino's usual message and stack.
 */
function serializeError(err: unknown): unknown {
  const db = databaseErrorIn(err);
  if (!db) return pino.stdSerializers.err(err as Error);
  const out: Record<string, unknown> = { type: typeName(db) };
  for (const key of ['code', 'constraint', 'table', 'column'] as const) if (typeof db[key] === 'string') out[key] = db[key];
  out.message = driverMessage(db);
  const frames = stackFrames(db.stack);
  if (frames) out.stack = frames;
  if (db !== err) out.wrappedIn = wrappers(err, db);
  return out;
}

type ErrorRecord = Error & Record<string, unknown>;

function isDatabaseError(e: ErrorRecord): boolean {
  return (
    e instanceof DriverException ||
    // pg's DatabaseError, before MikroORM converts it.
    (typeof e.severity === 'string' && typeof e.code === 'string') ||
    // The driver adds the statement and its values to timeout errors, the pool's included
    // (a transaction that could not begin has neither, nor any statement to hide).
    'sql' in e ||
    'bindings' in e
  );
}

/** The error itself or the first database error it wraps (cause, GraphQL's originalError, AggregateError). */
function databaseErrorIn(err: unknown, depth = 0): ErrorRecord | null {
  if (!err || typeof err !== 'object' || depth > 5) return null;
  const e = err as ErrorRecord;
  if (isDatabaseError(e)) return e;
  for (const inner of [e.cause, e.originalError, ...(Array.isArray(e.errors) ? e.errors : [])]) {
    const found = databaseErrorIn(inner, depth + 1);
    if (found) return found;
  }
  return null;
}

function wrappers(err: unknown, db: ErrorRecord): string[] {
  const names: string[] = [];
  let e = err as ErrorRecord | undefined;
  while (e && e !== db && names.length < 5) {
    names.push(typeName(e));
    e = (e.originalError ?? e.cause) as ErrorRecord | undefined;
  }
  return names;
}

function typeName(e: Error): string {
  return typeof e.constructor === 'function' && e.constructor.name ? e.constructor.name : e.name;
}

/**
 * PostgreSQL's own message. The driver builds `<statement> - <message>`: the last " - " is at or after
 * that boundary, so what follows it never contains the statement. Values PostgreSQL itself
 * quotes (`invalid input syntax for type integer: "..."`) are masked; identifiers the error
 * names in its own fields (constraint, table, column) stay readable.
 */
function driverMessage(e: ErrorRecord): string {
  let message = String(e.message ?? '');
  for (const key of ['hint', 'detail'] as const) {
    const suffix = typeof e[key] === 'string' ? `\n - ${key}: ${e[key]}` : null;
    if (suffix && message.endsWith(suffix)) message = message.slice(0, -suffix.length);
  }
  const cut = message.lastIndexOf(' - ');
  if (cut >= 0) message = message.slice(cut + 3);
  const known = new Set(['constraint', 'table', 'column', 'schema', 'dataType'].map((k) => e[k]).filter((v) => typeof v === 'string'));
  return message.replace(/"[^"]*"/g, (quoted) => (known.has(quoted.slice(1, -1)) ? quoted : '"?"')).replace(/: [^"]+$/, ': ?');
}

/** Only the `at ...` frames: the stack's first lines repeat the message, statement included. */
function stackFrames(stack: unknown): string | undefined {
  if (typeof stack !== 'string') return undefined;
  const frames = stack.split('\n').filter((line) => /^\s+at \S.*(:\d+:\d+\)?|\(native\)|<anonymous>\)?)$/.test(line));
  return frames.length ? frames.join('\n') : undefined;
}
