/**
 * The logging surface the code uses. main.ts supplies the real one; tests pass a quiet one.
 * Kept this small so any structured logger (pino) fits.
 */
export interface Logger {
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  debug(obj: object | string, msg?: string): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {}, debug() {} };

/** One JSON object a line on stdout; a stand-in until a structured logger is wired in. */
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
