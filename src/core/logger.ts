import pino, { type DestinationStream, type Logger as PinoLogger } from 'pino';
import pretty from 'pino-pretty';

/**
 * The logging surface the code uses. main.ts supplies pino; tests pass a quiet one (or a pino
 * logger writing to memory). Kept this small so any structured logger fits.
 */
export interface Logger {
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  debug(obj: object | string, msg?: string): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {}, debug() {} };

/**
 * Secrets that must never reach a log line, wherever a caller puts them. The request log builds
 * its own line from safe fields; this list is the net under every other call.
 */
export const REDACTED_PATHS = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  'password',
  'token',
  'secret',
  'jwtSecret',
  '*.authorization',
  '*.password',
  '*.token',
  '*.secret',
  '*.jwtSecret',
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
}

/** The service's logger: JSON lines (one object a line), secrets redacted, errors serialised. */
export function createPinoLogger(opts: PinoOptions = {}): PinoLogger {
  const options = {
    level: opts.level ?? 'info',
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
    serializers: { err: pino.stdSerializers.err },
  };
  const stream = opts.stream ?? (opts.pretty ? pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }) : undefined);
  return stream ? pino(options, stream) : pino(options);
}

/** Development on a terminal reads pretty lines; anything else (files, collectors, production) gets JSON. */
export function wantsPrettyLogs(env: string, isTty = Boolean(process.stdout.isTTY)): boolean {
  return env === 'development' && isTty;
}

/** One JSON object a line on stdout, without pino; kept for scripts that want no dependencies. */
export function consoleLogger(level = 'info'): Logger {
  const order = ['debug', 'info', 'warn', 'error'];
  const min = order.indexOf(level) === -1 ? (level === 'silent' ? 99 : 1) : order.indexOf(level);
  const write = (lvl: string) => (obj: object | string, msg?: string) => {
    if (order.indexOf(lvl) < min) return;
    const base = typeof obj === 'string' ? { msg: obj } : { ...obj, msg };
    const line = JSON.stringify({ level: lvl, time: new Date().toISOString(), ...base }, (_k, v) =>
      v instanceof Error ? { type: v.name, message: v.message, stack: v.stack } : v,
    );
    (lvl === 'error' || lvl === 'warn' ? process.stderr : process.stdout).write(line + '\n');
  };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}
