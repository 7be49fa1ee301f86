import { readdirSync, readFileSync, rmSync } from 'node:fs';

/**
 * What an interrupted test run leaves behind is stopped and removed here. jest runs its
 * globalTeardown only when the run ends; a SIGTERM or a Ctrl-C ends jest's process at once, and
 * nothing stopped the jest workers, the `npm start` children the tests run (each with its own
 * PostgreSQL, in a process group of its own), the test PostgreSQL, or the temporary folders.
 *
 * So global-setup.ts (run in jest's main process, which owns all of that) gives the run one
 * temporary folder, made TMPDIR for everything the run starts, and a marker in the environment
 * that every process it starts inherits; on SIGINT, SIGTERM or SIGHUP it calls
 * `stopRun`: every process that carries the marker or descends from jest's process is signalled
 * (PostgreSQL's postmasters SIGINT, a fast shutdown; the rest SIGTERM, so a server stops its own
 * database), those still running after the grace period are killed, and the folder is removed.
 *
 * It runs synchronously, blocking jest's event loop, so jest cannot start anything meanwhile or
 * exit before it is done. It reads /proc (Linux); elsewhere it only removes the folder.
 */
export const RUN_MARKER = 'BLOG_API_TEST_RUN';

interface Proc { pid: number; ppid: number; argv: string[]; marked: boolean }

function table(marker: string): Proc[] {
  const tag = `${RUN_MARKER}=${marker}`;
  const list: Proc[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return list;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z' || state === 'X') continue; // dead, waiting to be reaped
      let marked = false;
      try {
        marked = readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(tag);
      } catch { /* another user's process: not ours */ }
      list.push({ pid: Number(name), ppid: Number(ppid), argv: readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0'), marked });
    } catch { /* gone meanwhile */ }
  }
  return list;
}

/** The processes of the run: marked, or below this process (a child started with an environment of its own). */
function ofRun(marker: string): Proc[] {
  const all = table(marker);
  const below = new Set([process.pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all) if (below.has(p.ppid) && !below.has(p.pid)) { below.add(p.pid); grew = true; }
  }
  return all.filter((p) => p.pid !== process.pid && (p.marked || below.has(p.pid)));
}

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** A postmaster keeps its command line; its children retitle themselves "postgres: ...". */
const isPostmaster = (p: Proc) => /(^|\/)postgres$/.test(p.argv[0]);
const isPostgresChild = (p: Proc) => p.argv[0].startsWith('postgres:');

function kill(pid: number, signal: NodeJS.Signals): void {
  try { process.kill(pid, signal); } catch { /* gone */ }
}

/** Stops every process of the run (see above), then removes `dirs`. Returns what had to be killed. */
export function stopRun(marker: string, dirs: string[], graceMs = 20_000): number[] {
  const signalled = new Set<number>();
  const deadline = Date.now() + graceMs;
  const killed: number[] = [];
  for (let left = ofRun(marker); left.length; left = ofRun(marker)) {
    if (Date.now() > deadline) {
      for (const p of left) { kill(p.pid, 'SIGKILL'); killed.push(p.pid); }
      if (Date.now() > deadline + 5_000) break;
    } else {
      for (const p of left) {
        if (signalled.has(p.pid) || isPostgresChild(p)) continue; // a backend goes with its postmaster
        signalled.add(p.pid);
        kill(p.pid, isPostmaster(p) ? 'SIGINT' : 'SIGTERM');
      }
    }
    sleep(50);
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  return killed;
}

/**
 * Calls `cleanup` on the first SIGINT, SIGTERM or SIGHUP, then ends this process by that signal
 * (its exit status says so). A second signal meanwhile is ignored.
 */
export function onInterrupt(cleanup: (signal: NodeJS.Signals) => void): void {
  let done = false;
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  const handler = (signal: NodeJS.Signals) => {
    if (done) return;
    done = true;
    try {
      cleanup(signal);
    } finally {
      for (const s of signals) process.removeAllListeners(s);
      process.kill(process.pid, signal);
    }
  };
  for (const s of signals) process.on(s, handler);
}
