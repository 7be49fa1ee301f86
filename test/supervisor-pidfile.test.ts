import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clusterOf, leftovers, serverPid, waitUntil } from './support/npm-start';
import { supervisedCopy } from './support/supervisor';

/**
 * `npm start` under a supervisor (Docker's CMD ["npm","start"], systemd, PM2, CI, `kill <pid>`):
 * the signal reaches npm's pid only, never the group. And a service killed hard (SIGKILL)
 * recovers its data directory at the next start and says how (CONTRACT 2). Here: the whole tree
 * killed, and a postmaster.pid whose pid came round again (the signals: test/supervisor.test.ts;
 * the server killed alone: test/supervisor-recovery.test.ts).
 */
jest.setTimeout(180_000);

const sv = supervisedCopy('supervisor-pidfile');

describe('after a hard kill, the next start recovers the data directory and says what it did', () => {
  it('SIGKILL to the whole tree (npm, node, PostgreSQL and its backends): the stale postmaster.pid is reported and replaced', async () => {
    const s = await sv.startReady();
    await sv.insertUser('kill-all@example.test');
    const pid = Number(readFileSync(join(clusterOf(sv.copy()), 'postmaster.pid'), 'utf8').split('\n')[0]);
    // The postmaster first (named by its pid file, not found by a scan that can miss it): killed
    // after the server, it would be asked to shut down cleanly and remove its pid file.
    const tree = [{ pid }, ...leftovers(sv.copy()).filter((p) => p.cwd === clusterOf(sv.copy())), { pid: serverPid(sv.copy()) }, { pid: s.npm.pid! }];
    for (const p of tree) try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone */ }
    await s.exited;
    await waitUntil(() => leftovers(sv.copy()).length === 0, 'the killed tree to be gone');

    const again = await sv.startReady();
    expect(again.output()).toContain(`found a stale postmaster.pid (pid ${pid} is not running) left by a previous run that was killed`);
    expect(await sv.userExists('kill-all@example.test')).toBe(true);
    await sv.stopCleanly(again);
  });

  it('a postmaster.pid whose pid now belongs to another process: that process is left alone, the file removed and reported', async () => {
    const s = await sv.startReady();
    const pidFile = join(clusterOf(sv.copy()), 'postmaster.pid');
    const real = readFileSync(pidFile, 'utf8');
    await sv.stopCleanly(s);

    // The pid recycled: after a reboot or a container restart, small pids come round again.
    const bystander = spawn('sleep', ['300'], { stdio: 'ignore' });
    try {
      writeFileSync(pidFile, [String(bystander.pid), ...real.split('\n').slice(1)].join('\n'));
      const again = await sv.startReady();
      expect(again.output()).toContain(`removed a stale postmaster.pid left by a previous run: its pid ${bystander.pid} now belongs to another process (sleep 300)`);
      expect(bystander.exitCode).toBeNull();
      expect(bystander.signalCode).toBeNull();
      await sv.stopCleanly(again);
    } finally {
      bystander.kill('SIGKILL');
    }
  });
});
