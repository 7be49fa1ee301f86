import { existsSync, readFileSync } from 'node:fs';
import { createServer, get } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import { loadConfig } from '../src/config/config';
import { freshCopy, stopLeftovers, leftovers, npmStart, processes, waitUntil, type Copy } from './support/npm-start';

/**
 * WEB_CONCURRENCY=2 npm start: two workers share the port under one
 * primary that owns the embedded PostgreSQL; a worker that dies is replaced; /metrics counts
 * every worker's requests; SIGTERM to npm's pid alone drains both and leaves nothing running.
 */
jest.setTimeout(180_000);

let copy: Copy;
// A failed test must not hand its running server to the next one.
afterEach(() => stopLeftovers(copy));
beforeAll(() => (copy = freshCopy('cluster')));
afterAll(() => {
  for (const p of leftovers(copy)) try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone */ }
  copy.remove();
});

/** A GET on a connection of its own (no agent, no keep-alive), so the primary hands each to a worker anew. */
function fresh(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent: false, headers: { connection: 'close' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    }).on('error', reject);
  });
}

interface Line { worker?: number | string; workerId?: number; restartInMs?: number; pid?: number; msg: string; route?: string; code?: number | null; signal?: string | null; replaces?: number }
const lines = (out: string): Line[] => out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Line);

it('two workers answer, a killed one is replaced, /metrics sums both, SIGTERM to npm leaves nothing running', async () => {
  const s = npmStart(copy, { WEB_CONCURRENCY: '2' });
  await s.ready;
  await waitUntil(() => s.output().includes('"msg":"2 workers listening"'), 'both workers to listen');
  // The primary logs on the workers' 'listening' events; each worker writes its own line just after.
  await waitUntil(() => (s.output().match(/"msg":"listening on /g) ?? []).length >= 2, "both workers' listening lines");
  const port = s.port();

  const primary = processes().find((p) => p.ppid === s.npm.pid)!;
  // The primary says the workers' URL for the scripts beside it (npm run seed), once.
  expect(JSON.parse(readFileSync(join(copy.dataDir, 'service.json'), 'utf8'))).toEqual({ url: `http://localhost:${port}`, pid: primary.pid });
  const workers = () => processes().filter((p) => p.ppid === primary.pid && /dist\/src\/main\.js/.test(p.cmd));
  expect(workers()).toHaveLength(2);
  // Migrations ran once, in the primary, before the workers; the database is the primary's child.
  expect(leftovers(copy).filter((p) => /postgres -D/.test(p.cmd)).map((p) => p.ppid)).toEqual([primary.pid]);
  const startLines = lines(s.output());
  expect(startLines.filter((l) => l.msg === 'embedded PostgreSQL started').map((l) => l.worker)).toEqual(['primary']);
  expect(new Set(startLines.filter((l) => l.msg.startsWith('listening on')).map((l) => l.worker))).toEqual(new Set([1, 2]));

  // Both answer: each request on a new connection, spread by the primary.
  const before = s.output().length;
  const answers = [];
  for (let i = 0; i < 20; i++) answers.push(await fresh(port, '/healthz'));
  expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
  await waitUntil(() => lines(s.output().slice(before)).filter((l) => l.msg === 'request').length >= 20, 'the request lines');
  const served = lines(s.output().slice(before)).filter((l) => l.msg === 'request' && l.route === '/healthz');
  expect(new Set(served.map((l) => l.worker))).toEqual(new Set([1, 2]));

  // /metrics, asked of whichever worker, counts the requests of both.
  const metrics = await fresh(port, '/metrics');
  expect(metrics.status).toBe(200);
  expect(metrics.body).toContain('http_requests_total{method="GET",route="/healthz",status_code="200"} 20');

  // One worker killed: logged with its id and signal, replaced, and the service keeps answering.
  const victim = workers()[0];
  const victimId = lines(s.output()).find((l) => l.msg.startsWith('listening on') && l.pid === victim.pid)!.worker;
  expect([1, 2]).toContain(victimId);
  process.kill(victim.pid, 'SIGKILL');
  await waitUntil(() => /replaced worker/.test(s.output()), 'a replacement');
  const died = lines(s.output()).find((l) => l.msg.includes('starting a replacement'))!;
  expect(died).toMatchObject({ worker: 'primary', workerId: victimId, pid: victim.pid, signal: 'SIGKILL', code: null });
  expect(lines(s.output()).find((l) => l.msg.includes('replaced worker'))).toMatchObject({ worker: 'primary', workerId: 3, replaces: victimId });
  await waitUntil(() => workers().length === 2, 'two workers again');
  const after = [];
  for (let i = 0; i < 10; i++) after.push((await fresh(port, '/healthz')).status);
  expect(after).toEqual(Array(10).fill(200));

  // A second death within the minute: the replacement waits (the crash-loop backoff).
  const third = lines(s.output()).find((l) => l.msg.startsWith('listening on') && l.worker === 3)!;
  process.kill(third.pid!, 'SIGKILL');
  await waitUntil(() => /replaced worker 3/.test(s.output()), 'the second replacement');
  expect(lines(s.output()).find((l) => l.workerId === 3 && l.msg.includes('starting a replacement'))).toMatchObject({ signal: 'SIGKILL', restartInMs: 500 });
  await waitUntil(() => workers().length === 2, 'two workers again');

  // SIGTERM to npm alone: every worker drains, then the database stops, exit 0.
  s.npm.kill('SIGTERM');
  expect(await s.exited).toEqual({ code: 0, signal: null });
  const end = lines(s.output());
  expect(end.filter((l) => l.msg === 'shutting down: draining requests').map((l) => l.worker).sort()).toEqual([4, victimId === 1 ? 2 : 1].sort());
  expect(end.at(-1)).toMatchObject({ worker: 'primary', msg: 'stopped' });
  expect(leftovers(copy)).toEqual([]);
  expect(existsSync(join(copy.dataDir, 'service.json'))).toBe(false);
});

it('a worker that cannot start stops the whole start: exit 1, the reason printed, nothing left running', async () => {
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, '0.0.0.0', () => r()));
  const { port } = taken.address() as AddressInfo;
  try {
    const s = npmStart(copy, { WEB_CONCURRENCY: '2', PORT: String(port) });
    expect((await s.exited).code).toBe(1);
    expect(s.output()).toContain(`Failed to start: Port ${port} is in use: stop the other process or set PORT.`);
    expect(lines(s.output()).find((l) => l.msg === 'a worker failed to start; stopping')).toMatchObject({ worker: 'primary' });
    await waitUntil(() => leftovers(copy).length === 0, 'nothing left');
  } finally {
    taken.close();
  }
});

it('WEB_CONCURRENCY: 1 by default, a whole number of workers, or auto (one per core); anything else is named', () => {
  expect(loadConfig({}).webConcurrency).toBe(1);
  expect(loadConfig({ WEB_CONCURRENCY: '3' }).webConcurrency).toBe(3);
  expect(loadConfig({ WEB_CONCURRENCY: 'auto' }).webConcurrency).toBe(availableParallelism());
  for (const bad of ['0', 'two', '-1', '1.5']) {
    expect(() => loadConfig({ WEB_CONCURRENCY: bad })).toThrow('WEB_CONCURRENCY: must be a whole number of workers (at least 1) or auto');
  }
});
