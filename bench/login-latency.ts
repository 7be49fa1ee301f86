/**
 * Measures account latencies against the BUILT app at the default bcrypt cost (12):
 *   npm run build && node dist/bench/login-latency.js            (starts dist/src/main.js itself)
 *   BASE_URL=http://localhost:3000 node dist/bench/login-latency.js   (an app already running)
 * Prints register and login latency, GET /healthz latency alone and while 20 logins run in
 * parallel, and forgot-password latency for known vs unknown emails. Not a test: numbers only.
 */
import bcrypt from 'bcrypt';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../src/db/embedded';

const N = Number(process.env.N ?? 10);

function stats(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { n: s.length, min: +s[0].toFixed(1), median: +q(0.5).toFixed(1), p95: +q(0.95).toFixed(1), max: +s[s.length - 1].toFixed(1) };
}

async function timed(fn: () => Promise<Response>): Promise<number> {
  const t = performance.now();
  const res = await fn();
  await res.arrayBuffer();
  if (res.status >= 500) throw new Error(`HTTP ${res.status}`);
  return performance.now() - t;
}

const post = (base: string, path: string, body: unknown) =>
  fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });


async function startApp(): Promise<{ base: string; child: ChildProcess; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-accounts-'));
  chmodSync(dir, 0o755);
  const port = await freePort();
  const child = spawn(process.execPath, [join(__dirname, '..', 'src', 'main.js')], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir, AUTH_RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn', BCRYPT_COST: process.env.BCRYPT_COST ?? '' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(base + '/healthz')).ok) return { base, child, dir };
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('app did not start');
}

async function main() {
  const own = process.env.BASE_URL ? undefined : await startApp();
  const base = process.env.BASE_URL ?? own!.base;
  try {
    const run = Date.now().toString(36);
    const emails = Array.from({ length: 20 }, (_, i) => `bench-${run}-${i}@example.test`);

    const register: number[] = [];
    for (const email of emails) register.push(await timed(() => post(base, '/auth/register', { name: 'Bench', email, password: 'password123' })));
    const login: number[] = [];
    for (const email of emails.slice(0, N)) login.push(await timed(() => post(base, '/auth/login', { email, password: 'password123' })));
    const loginUnknown: number[] = [];
    for (let i = 0; i < N; i++) loginUnknown.push(await timed(() => post(base, '/auth/login', { email: `nobody-${run}-${i}@example.test`, password: 'password123' })));

    const healthAlone: number[] = [];
    for (let i = 0; i < 50; i++) healthAlone.push(await timed(() => fetch(base + '/healthz')));

    const healthBusy: number[] = [];
    let done = false;
    const t0 = performance.now();
    const parallel = Promise.all(emails.map((email) => timed(() => post(base, '/auth/login', { email, password: 'password123' })))).finally(() => (done = true));
    while (!done) healthBusy.push(await timed(() => fetch(base + '/healthz')));
    const parallelLogins = await parallel;
    const wall = performance.now() - t0;

    const forgotKnown: number[] = [];
    const forgotUnknown: number[] = [];
    for (let i = 0; i < 5; i++) {
      forgotKnown.push(await timed(() => post(base, '/auth/forgot-password', { email: emails[i] })));
      forgotUnknown.push(await timed(() => post(base, '/auth/forgot-password', { email: `ghost-${run}-${i}@example.test` })));
    }

    // The machine's own speed at the same moment: one bare bcrypt compare at cost 12, no app.
    const hash = await bcrypt.hash('password123', 12);
    const bare: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      await bcrypt.compare('password123', hash);
      bare.push(performance.now() - t);
    }

    const out = {
      bcryptCost: process.env.BCRYPT_COST || '12 (default)',
      bareBcryptCompareCost12Ms: stats(bare),
      registerMs: stats(register),
      loginMs: stats(login),
      loginUnknownEmailMs: stats(loginUnknown),
      healthzAloneMs: stats(healthAlone),
      healthzDuring20ParallelLoginsMs: stats(healthBusy),
      twentyParallelLogins: { wallMs: +wall.toFixed(0), each: stats(parallelLogins) },
      forgotKnownMs: stats(forgotKnown),
      forgotUnknownMs: stats(forgotUnknown),
    };
    process.stdout.write(JSON.stringify(out, null, 2) + '\n');
  } finally {
    if (own) {
      own.child.kill('SIGTERM');
      await new Promise((r) => own.child.once('exit', r));
      rmSync(own.dir, { recursive: true, force: true });
    }
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
