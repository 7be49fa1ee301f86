import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clusterClient, stopLeftovers, clusterOf, freshCopy, leftovers, npmStart, processes, serverPid, waitUntil, type Copy, type Started } from './support/npm-start';

/**
 * `npm start` under a supervisor (Docker's CMD ["npm","start"], systemd, PM2, CI, `kill <pid>`):
 * the signal reaches npm's pid only, never the group. And a service killed hard (SIGKILL)
 * recovers its data directory at the next start and says how (CONTRACT 2).
 */
jest.setTimeout(180_000);

let copy: Copy;
// A failed test must not hand its running server to the next one.
afterEach(() => stopLeftovers(copy));
beforeAll(() => (copy = freshCopy('supervisor')));
afterAll(() => {
  for (const p of leftovers(copy)) try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone */ }
  copy.remove();
});

async function startReady(env: Record<string, string> = {}): Promise<Started> {
  const s = npmStart(copy, env);
  await s.ready;
  return s;
}

async function insertUser(email: string): Promise<void> {
  const db = clusterClient(copy);
  await db.connect();
  await db.query(`insert into users (name, email, password, created_at, updated_at) values ('Kept', $1, 'x', now(), now())`, [email]);
  await db.end();
}

async function userExists(email: string): Promise<boolean> {
  const db = clusterClient(copy);
  await db.connect();
  const { rows } = await db.query('select 1 from users where email = $1', [email]);
  await db.end();
  return rows.length === 1;
}

async function stopCleanly(s: Started): Promise<void> {
  s.npm.kill('SIGTERM');
  expect(await s.exited).toEqual({ code: 0, signal: null });
  expect(leftovers(copy)).toEqual([]);
}

describe.each(['SIGTERM', 'SIGINT'] as const)('%s to the npm process alone', (signal) => {
  // How long it takes is the machine's business (a loaded one stops PostgreSQL slowly); that the
  // drain is cut at SHUTDOWN_TIMEOUT_MS is start.test.ts's stuck-request test.
  it('drains, stops the embedded PostgreSQL and exits 0, leaving nothing running', async () => {
    const s = await startReady();
    const before = leftovers(copy);
    expect(before.some((p) => /postgres -D/.test(p.cmd))).toBe(true);
    expect(before.some((p) => /dist\/src\/main\.js/.test(p.cmd))).toBe(true);

    process.kill(s.npm.pid!, signal);
    expect(await s.exited).toEqual({ code: 0, signal: null });
    expect(s.output()).toContain(`"signal":"${signal}","msg":"shutting down: draining requests"`);
    expect(s.output()).toContain('"msg":"stopped"');
    expect(leftovers(copy)).toEqual([]);
  });
});

it('npm itself killed with SIGKILL: the server notices it is orphaned, drains and stops its PostgreSQL', async () => {
  const s = await startReady();
  process.kill(s.npm.pid!, 'SIGKILL');
  await s.exited;
  await waitUntil(() => leftovers(copy).length === 0, 'the orphaned server to stop');
  expect(s.output()).toContain('"signal":"npm exited","msg":"shutting down: draining requests"');
  expect(s.output()).toContain('"msg":"stopped"');
});

describe('after a hard kill, the next start recovers the data directory and says what it did', () => {
  it('SIGKILL to the server alone: npm ends, its PostgreSQL shuts down too, the next start finds the data', async () => {
    const s = await startReady();
    await insertUser('kill-node@example.test');
    process.kill(serverPid(copy), 'SIGKILL');
    expect((await s.exited).code).not.toBe(0);
    await waitUntil(() => leftovers(copy).length === 0, 'nothing of the killed run left');

    const again = await startReady();
    expect(await userExists('kill-node@example.test')).toBe(true);
    await stopCleanly(again);
  });

  it('SIGKILL to the whole tree (npm, node, PostgreSQL and its backends): the stale postmaster.pid is reported and replaced', async () => {
    const s = await startReady();
    await insertUser('kill-all@example.test');
    const pid = Number(readFileSync(join(clusterOf(copy), 'postmaster.pid'), 'utf8').split('\n')[0]);
    // The postmaster first (named by its pid file, not found by a scan that can miss it): killed
    // after the server, it would be asked to shut down cleanly and remove its pid file.
    const tree = [{ pid }, ...leftovers(copy).filter((p) => p.cwd === clusterOf(copy)), { pid: serverPid(copy) }, { pid: s.npm.pid! }];
    for (const p of tree) try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone */ }
    await s.exited;
    await waitUntil(() => leftovers(copy).length === 0, 'the killed tree to be gone');

    const again = await startReady();
    expect(again.output()).toContain(`found a stale postmaster.pid (pid ${pid} is not running) left by a previous run that was killed`);
    expect(await userExists('kill-all@example.test')).toBe(true);
    await stopCleanly(again);
  });

  it('a PostgreSQL still running on the directory, its owner gone, is stopped and reported', async () => {
    // The postmaster of a run, exactly as it ran (command line and user), relaunched from here:
    // what a server killed where the kernel cannot stop its PostgreSQL (no setpriv) leaves behind.
    const s = await startReady();
    const postmaster = leftovers(copy).find((p) => /^\S*postgres -D/.test(p.cmd))!;
    const argv = readFileSync(`/proc/${postmaster.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const gid = Number(/^Gid:\s+(\d+)/m.exec(readFileSync(`/proc/${postmaster.pid}/status`, 'utf8'))?.[1]);
    await stopCleanly(s);

    const orphan = spawn(argv[0], argv.slice(1), { uid: postmaster.uid, gid, detached: true, stdio: 'ignore', env: { ...process.env, LC_ALL: 'C' } });
    const orphanExit = new Promise((r) => orphan.on('exit', r));
    const pidFile = join(clusterOf(copy), 'postmaster.pid');
    await waitUntil(() => { try { return readFileSync(pidFile, 'utf8').includes('ready'); } catch { return false; } }, 'the orphan to accept connections');

    const again = await startReady();
    await orphanExit;
    expect(again.output()).toContain(`stopped an orphaned PostgreSQL (pid ${orphan.pid}) left by a previous run`);
    expect(processes().some((p) => p.pid === orphan.pid)).toBe(false);
    expect(await userExists('kill-node@example.test')).toBe(true);
    await stopCleanly(again);
  });

  it('a postmaster.pid whose pid now belongs to another process: that process is left alone, the file removed and reported', async () => {
    const s = await startReady();
    const pidFile = join(clusterOf(copy), 'postmaster.pid');
    const real = readFileSync(pidFile, 'utf8');
    await stopCleanly(s);

    // The pid recycled: after a reboot or a container restart, small pids come round again.
    const bystander = spawn('sleep', ['300'], { stdio: 'ignore' });
    try {
      writeFileSync(pidFile, [String(bystander.pid), ...real.split('\n').slice(1)].join('\n'));
      const again = await startReady();
      expect(again.output()).toContain(`removed a stale postmaster.pid left by a previous run: its pid ${bystander.pid} now belongs to another process (sleep 300)`);
      expect(bystander.exitCode).toBeNull();
      expect(bystander.signalCode).toBeNull();
      await stopCleanly(again);
    } finally {
      bystander.kill('SIGKILL');
    }
  });
});
