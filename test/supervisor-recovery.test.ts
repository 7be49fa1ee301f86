import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { clusterOf, leftovers, processes, serverPid, waitUntil } from './support/npm-start';
import { supervisedCopy } from './support/supervisor';

/**
 * `npm start` under a supervisor (Docker's CMD ["npm","start"], systemd, PM2, CI, `kill <pid>`):
 * the signal reaches npm's pid only, never the group. And a service killed hard (SIGKILL)
 * recovers its data directory at the next start and says how (CONTRACT 2). Here: the server
 * killed alone, and the PostgreSQL it leaves running where the kernel cannot stop it (the signals:
 * test/supervisor.test.ts; the whole tree killed: test/supervisor-pidfile.test.ts).
 */
jest.setTimeout(180_000);

const sv = supervisedCopy('supervisor-recovery');

describe('after a hard kill, the next start recovers the data directory and says what it did', () => {
  it('SIGKILL to the server alone: npm ends, its PostgreSQL shuts down too, the next start finds the data', async () => {
    const s = await sv.startReady();
    await sv.insertUser('kill-node@example.test');
    process.kill(serverPid(sv.copy()), 'SIGKILL');
    expect((await s.exited).code).not.toBe(0);
    await waitUntil(() => leftovers(sv.copy()).length === 0, 'nothing of the killed run left');

    const again = await sv.startReady();
    expect(await sv.userExists('kill-node@example.test')).toBe(true);
    await sv.stopCleanly(again);
  });

  it('a PostgreSQL still running on the directory, its owner gone, is stopped and reported', async () => {
    // The postmaster of a run, exactly as it ran (command line and user), relaunched from here:
    // what a server killed where the kernel cannot stop its PostgreSQL (no setpriv) leaves behind.
    const s = await sv.startReady();
    const postmaster = leftovers(sv.copy()).find((p) => /^\S*postgres -D/.test(p.cmd))!;
    const argv = readFileSync(`/proc/${postmaster.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const gid = Number(/^Gid:\s+(\d+)/m.exec(readFileSync(`/proc/${postmaster.pid}/status`, 'utf8'))?.[1]);
    await sv.stopCleanly(s);

    const orphan = spawn(argv[0], argv.slice(1), { uid: postmaster.uid, gid, detached: true, stdio: 'ignore', env: { ...process.env, LC_ALL: 'C' } });
    const orphanExit = new Promise((r) => orphan.on('exit', r));
    const pidFile = join(clusterOf(sv.copy()), 'postmaster.pid');
    await waitUntil(() => { try { return readFileSync(pidFile, 'utf8').includes('ready'); } catch { return false; } }, 'the orphan to accept connections');

    const again = await sv.startReady();
    await orphanExit;
    expect(again.output()).toContain(`stopped an orphaned PostgreSQL (pid ${orphan.pid}) left by a previous run`);
    expect(processes().some((p) => p.pid === orphan.pid)).toBe(false);
    expect(await sv.userExists('kill-node@example.test')).toBe(true);
    await sv.stopCleanly(again);
  });
});
