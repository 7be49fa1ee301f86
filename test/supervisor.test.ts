import { leftovers, waitUntil } from './support/npm-start';
import { supervisedCopy } from './support/supervisor';

/**
 * `npm start` under a supervisor (Docker's CMD ["npm","start"], systemd, PM2, CI, `kill <pid>`):
 * the signal reaches npm's pid only, never the group. And a service killed hard (SIGKILL)
 * recovers its data directory at the next start and says how (CONTRACT 2). Here: the signals
 * (the hard kills: test/supervisor-recovery.test.ts, test/supervisor-pidfile.test.ts).
 */
jest.setTimeout(180_000);

const sv = supervisedCopy('supervisor');

describe.each(['SIGTERM', 'SIGINT'] as const)('%s to the npm process alone', (signal) => {
  // How long it takes is the machine's business (a loaded one stops PostgreSQL slowly); that the
  // drain is cut at SHUTDOWN_TIMEOUT_MS is start.test.ts's stuck-request test.
  it('drains, stops the embedded PostgreSQL and exits 0, leaving nothing running', async () => {
    const s = await sv.startReady();
    const before = leftovers(sv.copy());
    expect(before.some((p) => /postgres -D/.test(p.cmd))).toBe(true);
    expect(before.some((p) => /dist\/src\/main\.js/.test(p.cmd))).toBe(true);

    process.kill(s.npm.pid!, signal);
    expect(await s.exited).toEqual({ code: 0, signal: null });
    expect(s.output()).toContain(`"signal":"${signal}","msg":"shutting down: draining requests"`);
    expect(s.output()).toContain('"msg":"stopped"');
    expect(leftovers(sv.copy())).toEqual([]);
  });
});

it('npm itself killed with SIGKILL: the server notices it is orphaned, drains and stops its PostgreSQL', async () => {
  const s = await sv.startReady();
  process.kill(s.npm.pid!, 'SIGKILL');
  await s.exited;
  await waitUntil(() => leftovers(sv.copy()).length === 0, 'the orphaned server to stop');
  expect(s.output()).toContain('"signal":"npm exited","msg":"shutting down: draining requests"');
  expect(s.output()).toContain('"msg":"stopped"');
});
