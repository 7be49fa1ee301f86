import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { carrying } from './npm-start';
import { until } from './wait';

/**
 * `npm test` interrupted mid-run (test/interrupt*.test.ts): it runs two real test files (two jest
 * workers): test/cluster.test.ts, whose `npm start` runs its own PostgreSQL, and
 * test/json-sql.test.ts. Once the test PostgreSQL and that `npm start`'s PostgreSQL both run,
 * `signal` goes to `target(npm's pid)`. Afterwards no process of it is left (each carries a probe
 * in its environment, whatever its process group or parent) and the TMPDIR it was given is empty.
 * Call it at the top of the file: it registers the hook that removes what a failed test left.
 */
const root = join(__dirname, '..', '..');
const PROBE = 'BLOG_API_INTERRUPT_PROBE';

export function interruptedNpmTest() {
  let probe: string;
  let tmp: string;
  afterEach(async () => {
    // A failed test must not leave its run behind: every process of it (jest runs in a group of its
    // own, so npm's group is not enough), then its folder.
    await until(() => {
      for (const p of carrying(PROBE, probe)) try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone */ }
      return carrying(PROBE, probe).length === 0;
    }, 'the processes of the interrupted run to die', { ms: 30_000, everyMs: 100 });
    rmSync(tmp, { recursive: true, force: true });
  });

  return async (signal: NodeJS.Signals, target: (pid: number) => number): Promise<void> => {
    tmp = mkdtempSync(join(tmpdir(), 'blog-api-interrupt-'));
    chmodSync(tmp, 0o755);
    probe = randomBytes(8).toString('hex');
    // jest's cache and npm's compile cache live in TMPDIR by default and outlive runs by design:
    // jest's goes to a folder of this run's own, npm's is off.
    const cache = `--cacheDirectory=${join(tmpdir(), 'interrupt-jest-cache')}`;
    const child = spawn('npm', ['test', '--', 'test/cluster.test.ts', 'test/json-sql.test.ts', cache], {
      cwd: root,
      env: { ...process.env, TMPDIR: tmp, NODE_DISABLE_COMPILE_CACHE: '1', [PROBE]: probe },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));

    // Mid-run: two jest workers, the test PostgreSQL and the `npm start` server with its own PostgreSQL.
    let seen: string[] = [];
    const running = await until(() => {
      if (child.exitCode !== null || child.signalCode !== null) return 'ended early';
      const procs = carrying(PROBE, probe);
      seen = procs.map((p) => p.cmd);
      const postmasters = procs.filter((p) => /\/bin\/postgres -D /.test(p.cmd));
      const workers = procs.filter((p) => /jest-worker\/build\/processChild\.js/.test(p.cmd));
      const servers = procs.filter((p) => /^node .*dist\/src\/main\.js/.test(p.cmd));
      return postmasters.length === 2 && workers.length === 2 && servers.length >= 1 ? procs : undefined;
    }, 'npm test to run both workers, the test PostgreSQL and an npm start with its own PostgreSQL', { ms: 240_000, everyMs: 100 });
    if (running === 'ended early') throw new Error(`npm test ended before it was interrupted:\n${out}\nlast seen running:\n${seen.join('\n')}`);
    expect(readdirSync(tmp)).toEqual([expect.stringMatching(/^blog-api-run-/)]);

    process.kill(target(child.pid!), signal);
    const end = await exited;
    // npm reports the interruption: its script ended by the signal.
    expect(end.code ?? end.signal).not.toBe(0);
    expect(carrying(PROBE, probe)).toEqual([]);
    expect(readdirSync(tmp)).toEqual([]);
  };
}
