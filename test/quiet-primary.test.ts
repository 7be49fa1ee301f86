import { existsSync, readdirSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { Client } from 'pg';
import { caughtUp, startStreamingPair, type StreamingPair } from './support/replica';
import { freshCopy, leftovers, npmStart, stopLeftovers, waitUntil, type Copy, type Started } from './support/npm-start';

/**
 * A quiet primary (CONTRACT 18), with several workers: a real `npm start` on a real primary with a
 * streaming standby as DATABASE_REPLICA_URLS. /metrics behind METRICS_TOKEN still sums every
 * worker, the replica's state comes to every worker from the primary process, and one worker runs
 * the jobs, woken by NOTIFY. What an idle instance asks of the primary, with 1 and 4 workers:
 * test/quiet-primary-idle.test.ts.
 */
jest.setTimeout(400_000);

const TOKEN = 'quiet-primary-metrics-token';
let pair: StreamingPair;
let admin: Client;
let copy: Copy;
let database: string;
let env: Record<string, string>;

beforeAll(async () => {
  pair = await startStreamingPair();
  admin = new Client({ connectionString: pair.primaryUrl });
  await admin.connect();
  database = `quiet_${process.pid}`;
  await admin.query(`create database ${database}`);
  await caughtUp(pair.primaryUrl, pair.standbyUrl);
  env = {
    DATABASE_URL: pair.withDatabase(pair.primaryUrl, database),
    DATABASE_REPLICA_URLS: pair.withDatabase(pair.standbyUrl, database),
    METRICS_TOKEN: TOKEN,
  };
  copy = freshCopy('quiet');
});
afterEach(() => stopLeftovers(copy));
afterAll(async () => {
  for (const p of leftovers(copy)) try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone */ }
  copy?.remove();
  await admin?.end();
  await pair?.close();
});

async function started(workers: number, extra: Record<string, string> = {}): Promise<Started> {
  const s = npmStart(copy, { ...env, WEB_CONCURRENCY: String(workers), ...extra });
  await s.ready;
  if (workers > 1) await waitUntil(() => s.output().includes(`"msg":"${workers} workers listening"`), 'every worker');
  return s;
}

async function stopped(s: Started): Promise<void> {
  s.npm.kill('SIGTERM');
  // The service's own last lines with the exit, so a failed shutdown says why (seen once in CI, never reproduced).
  const exited = await s.exited;
  expect({ exited, output: exited.code === 0 ? '' : s.output().slice(-4000) }).toEqual({ exited: { code: 0, signal: null }, output: '' });
}

/** A GET on a connection of its own, so the cluster's primary hands each to a worker anew. */
function fresh(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent: false, headers: { connection: 'close', ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    }).on('error', reject);
  });
}

const lines = (out: string) => out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);

it('4 workers: /metrics answers only the bearer and sums every worker; each worker reads through the replica its primary measured; one worker runs the jobs, woken by NOTIFY', async () => {
  // A generous lag bound: a standby slowed by a busy machine must not make the answers below flaky.
  const s = await started(4, { BCRYPT_COST: '4', REPLICA_MAX_LAG_MS: '60000' });
  const port = s.port();
  for (let i = 0; i < 12; i++) expect((await fresh(port, '/readyz')).body).toBe(JSON.stringify({ status: 'ready', replicas: { in_use: ['replica-1'], skipped: [] } }));
  const served = () => lines(s.output()).filter((l) => l.msg === 'request' && l.route === '/readyz');
  await waitUntil(() => served().length >= 12, 'the request lines');
  expect(new Set(served().map((l) => l.worker)).size).toBeGreaterThan(1);

  expect((await fresh(port, '/metrics')).status).toBe(401);
  expect((await fresh(port, '/metrics', { authorization: 'Bearer nope' })).status).toBe(401);
  const metrics = await fresh(port, '/metrics', { authorization: `Bearer ${TOKEN}` });
  expect(metrics.status).toBe(200);
  // Every /readyz answered so far (the start's own polls too), whichever worker answered it.
  expect(Number(/^http_requests_total\{method="GET",route="\/readyz",status_code="200"\} (\d+)$/m.exec(metrics.body)?.[1])).toBe(served().length);
  // Every worker says "in use" (1): the cluster's sum would be 4, its minimum is 1.
  expect(metrics.body).toMatch(/^db_replica_in_use\{pool="replica-1"\} 1$/m);

  // One worker runs the jobs; mails registered through any worker are sent at once (the safety
  // poll is 10 s): the insert's NOTIFY wakes that worker.
  expect(lines(s.output()).filter((l) => typeof l.msg === 'string' && l.msg.endsWith('runs the background jobs'))).toHaveLength(1);
  const mailDir = join(copy.dataDir, 'mail');
  const mailsBefore = existsSync(mailDir) ? readdirSync(mailDir).length : 0;
  for (let i = 0; i < 4; i++) {
    const res = await fetch(`http://127.0.0.1:${port}/auth/register`, {
      method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' },
      body: JSON.stringify({ name: 'Quiet', email: `quiet-${i}-${Date.now()}@example.test`, password: 'password123' }),
    });
    expect(res.status).toBe(201);
  }
  const registered = Date.now();
  await waitUntil(() => existsSync(mailDir) && readdirSync(mailDir).length >= mailsBefore + 4, 'four mails', 5_000);
  expect(Date.now() - registered).toBeLessThan(5_000);
  const senders = new Set(lines(s.output()).filter((l) => l.msg === 'mail written to file (no SMTP_URL)').map((l) => l.worker));
  expect(senders.size).toBe(1);
  await stopped(s);
});
