import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { followStart } from './follow-start';
import { builtService } from './service-build';

/**
 * Real service processes, started as `npm start` starts one (the built dist/src/main.js), for
 * tests that need several instances on one database. Call buildService() once first (the run's
 * shared build, test/support/service-build.ts), and removeService() in afterAll.
 */
let root: string | undefined;

export interface Instance {
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Its JSON log lines so far, parsed. */
  logs(): Record<string, unknown>[];
  port(): number;
  url(): string;
  /** Resolves once /readyz answers 200. */
  ready: Promise<void>;
  exited: Promise<number | null>;
}

/** Makes the run's build of the service this file's (built by the first file that asks). */
export function buildService(): void {
  root = builtService();
}

/** The root of the build buildService() named (its dist/ is the service's build). */
export function serviceRoot(): string {
  if (!root) throw new Error('buildService() first');
  return root;
}

/** Forgets the build (after the instances have stopped); the run's build itself stays for other files. */
export function removeService(): void {
  root = undefined;
}

/** PORT 0: the system picks a free port, read back from the "listening" line. */
export function startInstance(env: Record<string, string>): Instance {
  if (!root) throw new Error('buildService() first');
  const child = spawn(process.execPath, [join(root, 'dist', 'src', 'main.js')], {
    env: { ...process.env, NODE_ENV: 'development', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { output, port, ready } = followStart(child);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const logs = () =>
    output().split('\n').flatMap((line) => {
      if (!line.startsWith('{')) return [];
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  return { child, output, logs, port, url: () => `http://127.0.0.1:${port()}`, ready, exited };
}

/** Stops an instance still running (SIGTERM, then SIGKILL after 15 s); for afterAll. */
export async function stopInstance(i: Instance | undefined): Promise<void> {
  if (!i || i.child.exitCode !== null || i.child.signalCode !== null) return;
  i.child.kill('SIGTERM');
  const timer = setTimeout(() => i.child.kill('SIGKILL'), 15_000);
  await i.exited;
  clearTimeout(timer);
}
