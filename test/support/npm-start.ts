import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { followStart } from './follow-start';

/**
 * `npm start` as a user runs it, in a fresh copy of the project (sources, build script and
 * package.json; node_modules linked, not installed), so npm's own process tree is the one
 * under test: npm -> the script's shell -> node -> PostgreSQL.
 */
const root = join(__dirname, '..', '..');

export interface Copy { dir: string; dataDir: string; remove(): void }

export function freshCopy(prefix: string): Copy {
  const dir = mkdtempSync(join(tmpdir(), `blog-api-${prefix}-`));
  chmodSync(dir, 0o755); // as root, PostgreSQL runs as `postgres`, which must reach DATA_DIR
  for (const entry of ['package.json', '.swcrc', 'mikro-orm.config.ts', 'src', 'scripts']) cpSync(join(root, entry), join(dir, entry), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  const dataDir = join(dir, '.data');
  mkdirSync(dataDir);
  return { dir, dataDir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface Started {
  npm: ChildProcess;
  output: () => string;
  port: () => number;
  ready: Promise<void>;
  /** npm's exit: code, or the signal that ended it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function npmStart(copy: Copy, extraEnv: Record<string, string> = {}): Started {
  const npm = spawn('npm', ['start'], {
    cwd: copy.dir,
    env: { ...process.env, NODE_ENV: 'development', PORT: '0', DATA_DIR: copy.dataDir, LOG_LEVEL: 'info', DATABASE_URL: '', JWT_SECRET: '', ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { output, port, ready } = followStart(npm);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => npm.on('exit', (code, signal) => resolve({ code, signal })));
  return { npm, output, port, ready, exited };
}

export interface Proc { pid: number; ppid: number; cwd: string; cmd: string; uid: number }

/** Every process this machine shows us, from /proc. */
export function processes(): Proc[] {
  const list: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const status = readFileSync(`/proc/${name}/status`, 'utf8');
      list.push({
        pid: Number(name),
        ppid: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]),
        cwd: readlinkSync(`/proc/${name}/cwd`),
        cmd: readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' '),
        uid: Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]),
      });
    } catch { /* gone meanwhile, or not ours to read */ }
  }
  return list;
}

/**
 * The live processes whose environment has `variable=value` (zombies, dead and not yet reaped, are
 * not counted): everything a command started with that variable set, whatever its group or parent.
 */
export function carrying(variable: string, value: string): Proc[] {
  return processes().filter((p) => {
    try {
      const stat = readFileSync(`/proc/${p.pid}/stat`, 'utf8');
      if (/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2))) return false;
      return readFileSync(`/proc/${p.pid}/environ`, 'utf8').split('\0').includes(`${variable}=${value}`);
    } catch {
      return false; // gone meanwhile
    }
  });
}

/** The embedded cluster's folder (DATA_DIR/postgres, or where its symlink points). */
export function clusterOf(copy: Copy): string {
  return realpathSync(join(copy.dataDir, 'postgres'));
}

/**
 * What this copy left running: anything whose working directory is the copy (npm, the shell,
 * node) or the cluster (PostgreSQL changes into its data directory, backends included).
 * Zombies (already dead, not yet reaped) have no cwd to read and are not counted.
 */
export function leftovers(copy: Copy): Proc[] {
  const cluster = existsSync(join(copy.dataDir, 'postgres')) ? clusterOf(copy) : undefined;
  return processes().filter((p) => p.pid !== process.pid && (p.cwd === copy.dir || p.cwd.startsWith(`${copy.dir}/`) || (cluster && p.cwd === cluster)));
}

export async function waitUntil(what: () => boolean, label: string, ms = 20_000): Promise<void> {
  for (const deadline = Date.now() + ms; !what(); await new Promise((r) => setTimeout(r, 100))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${label}`);
  }
}

/** The server process: node running dist/src/main.js in the copy (npm's child once the script execs). */
export function serverPid(copy: Copy): number {
  const found = processes().filter((p) => p.cwd === copy.dir && /^node .*dist\/src\/main\.js/.test(p.cmd));
  if (found.length !== 1) throw new Error(`expected one server process, found ${JSON.stringify(found)}`);
  return found[0].pid;
}

/** A connection to the embedded cluster, from the files it keeps (password in DATA_DIR, port in postmaster.pid). */
export function clusterClient(copy: Copy): Client {
  const port = Number(readFileSync(join(clusterOf(copy), 'postmaster.pid'), 'utf8').split('\n')[3]);
  const password = readFileSync(join(copy.dataDir, 'postgres-password'), 'utf8').trim();
  return new Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' });
}

/** Ends what a (failed) test left: SIGTERM to the servers, so their PostgreSQL stops cleanly, then SIGKILL to whatever remains. */
export async function stopLeftovers(copy: Copy): Promise<void> {
  const servers = leftovers(copy).filter((p) => /dist\/src\/main\.js/.test(p.cmd));
  for (const p of servers) try { process.kill(p.pid, 'SIGTERM'); } catch { /* gone */ }
  await waitUntil(() => leftovers(copy).length === 0, 'leftovers to stop', 20_000).catch(() => undefined);
  for (const p of leftovers(copy)) try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone */ }
}

/** The end of a test that ran `npm start` in a copy: SIGTERM if still running, then what it left, then the copy. */
export async function stopStarted(server: Started | undefined, copy: Copy | undefined): Promise<void> {
  if (server && server.npm.exitCode === null) {
    server.npm.kill('SIGTERM');
    await server.exited;
  }
  if (copy) {
    await stopLeftovers(copy);
    copy.remove();
  }
}
