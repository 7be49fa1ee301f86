import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, unlinkSync } from 'node:fs';

/**
 * What a previous run left on a cluster, told apart before anything is signalled: a pid in
 * postmaster.pid may since have been reused by an unrelated process (containers restart with
 * the same small pids), and `pg_ctl stop` would send it SIGINT blindly.
 */
export type ClusterState =
  | { kind: 'clean' }
  /**
   * postmaster.pid names no running process: PostgreSQL replaces the file itself (after checking
   * its shared memory is free). `zombie`: the killed postmaster is dead but not yet reaped (its
   * parent was killed too, and a container's PID 1 may never reap it); it still answers kill(pid, 0),
   * so PostgreSQL would take it for a live postmaster: the file must go.
   */
  | { kind: 'stale'; pid: number; zombie: boolean }
  /** postmaster.pid names a live process that is not a PostgreSQL on this directory: PostgreSQL would refuse to start. */
  | { kind: 'reused'; pid: number; command: string }
  /** A postmaster runs on the cluster, child of its live owner (a running `npm start`): share it. */
  | { kind: 'owned'; pid: number; port: number }
  /** A postmaster runs on the cluster and the process that started it is gone. */
  | { kind: 'orphaned'; pid: number };

/** Whether process `pid` exists (signal 0 probes without signalling; EPERM means it exists under another user). */
export function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** argv, parent and zombie state of a process: /proc on Linux, `ps` elsewhere; undefined when it is gone. */
function processInfo(pid: number): { argv: string[]; ppid: number; zombie: boolean } | undefined {
  if (existsSync('/proc/self/stat')) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return { argv, ppid: Number(ppid), zombie: state === 'Z' || state === 'X' };
    } catch {
      return undefined;
    }
  }
  const ps = spawnSync('ps', ['-o', 'stat=,ppid=,command=', '-p', String(pid)], { encoding: 'utf8' });
  const m = /^\s*(\S+)\s+(\d+)\s+(.*)$/.exec(ps.stdout ?? '');
  return m ? { argv: m[3].split(/\s+/), ppid: Number(m[2]), zombie: m[1].startsWith('Z') } : undefined;
}

function samePath(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

/** A postmaster keeps its command line (`postgres -D <cluster> ...`); backends retitle themselves. */
function isPostmasterOn(argv: string[], cluster: string): boolean {
  if (!argv[0] || !/(^|\/)postgres$/.test(argv[0])) return false;
  const d = argv.indexOf('-D');
  return d >= 0 && !!argv[d + 1] && samePath(argv[d + 1], cluster);
}

export function inspectCluster(cluster: string, ownerFile: string): ClusterState {
  const pidFile = `${cluster}/postmaster.pid`;
  if (!existsSync(pidFile)) return { kind: 'clean' };
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const info = alive(pid) ? processInfo(pid) : undefined;
  if (!info || info.zombie) return { kind: 'stale', pid, zombie: !!info };
  if (!isPostmasterOn(info.argv, cluster)) return { kind: 'reused', pid, command: info.argv.join(' ').slice(0, 80) };
  const ownerPid = existsSync(ownerFile) ? Number(readFileSync(ownerFile, 'utf8').trim()) : 0;
  // Its parent is the owner only while the owner lives: a killed owner's postmaster is re-parented.
  if (ownerPid && ownerPid !== process.pid && info.ppid === ownerPid && alive(ownerPid) && Number(lines[3])) {
    return { kind: 'owned', pid, port: Number(lines[3]) };
  }
  return { kind: 'orphaned', pid };
}

export function removeStalePidFile(cluster: string): void {
  try { unlinkSync(`${cluster}/postmaster.pid`); } catch { /* already gone */ }
}
