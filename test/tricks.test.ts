/**
 * The performance tricks the service keeps, each held to what it relies on, so that none can
 * stop working silently. Here, the ones seen in a running service process:
 *
 * - src/core/heap.ts turns off V8's allocation-site pretenuring, and main.js loads it before
 *   anything else. Seen through V8's own trace (--trace-pretenuring-statistics): V8 weighs its
 *   allocation sites after young collections only while the flag is on, so with it off not one
 *   line is printed, while the same code without heap.js prints them.
 * - src/core/threadpool-priority.ts nices libuv's thread pool: bcrypt's hashes of a real login
 *   burst run on threads whose nice value is THREADPOOL_NICE, and the event loop's is 0
 *   (/proc/<pid>/task/<tid>/stat, per-thread CPU time and nice value).
 *
 * The others: test/tricks-tokens.test.ts (the token cache), test/tricks-memory.test.ts (the
 * embedded PostgreSQL's malloc thresholds, results that die young).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from './support/harness';
import { rest } from './support/client';
import { uniqueEmail } from './support/factories';
import { followStart, type FollowedStart } from './support/follow-start';
import { runNode } from './support/node-child';
import { builtService } from './support/service-build';
import { settled } from './support/wait';

jest.setTimeout(120_000);

/** V8's lines about pretenuring (decisions with --trace-pretenuring, per-collection figures with --trace-pretenuring-statistics). */
const PRETENURING_LINE = /^\[\d+:0x[0-9a-f]+\] pretenuring:/m;
const TRACE = ['--trace-pretenuring', '--trace-pretenuring-statistics'];

/**
 * The build `npm start` runs (scripts/build.mjs), the run's shared one (test/support/service-build.ts),
 * and a scratch folder of this file's own for the services' data directories.
 */
let root: string;
let scratch: string;
function build(): void {
  root = builtService();
  scratch = mkdtempSync(join(tmpdir(), 'blog-api-tricks-'));
}

interface Service extends FollowedStart {
  child: ChildProcess;
  url(): string;
  exited: Promise<unknown>;
}

/** `node <nodeArgs> dist/src/main.js`, as `npm start` runs it, on a database of its own. */
async function startService(nodeArgs: string[], env: Record<string, string>): Promise<Service> {
  const dataDir = mkdtempSync(join(scratch, 'data-'));
  const child = spawn(process.execPath, [...nodeArgs, join(root, 'dist', 'src', 'main.js')], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'development',
      PORT: '0',
      LOG_LEVEL: 'info',
      DATABASE_URL: await createTestDatabase(),
      DATA_DIR: dataDir,
      JWT_SECRET: 'tricks-test-secret-that-is-long-enough-to-pass',
      APP_URL: 'http://app.test',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const followed = followStart(child);
  const exited = new Promise((resolve) => child.on('exit', resolve));
  return { ...followed, child, exited, url: () => `http://127.0.0.1:${followed.port()}` };
}

async function stopService(s: Service | undefined): Promise<void> {
  if (!s || s.child.exitCode !== null || s.child.signalCode !== null) return;
  s.child.kill('SIGTERM');
  await settled(s.exited, 'the service to exit on SIGTERM', 15_000).catch(() => {
    s.child.kill('SIGKILL');
    return s.exited;
  });
}

/** Allocations that survive young collections from a few hot sites: what V8 pretenures. */
const SURVIVORS = `
  const keep = [];
  const make = (i) => ({ a: i, b: [i], c: { d: i } });
  for (let r = 0; r < 30; r++) {
    for (let i = 0; i < 100000; i++) keep.push(make(i));
    if (keep.length > 1000000) keep.length = 0;
  }
  console.log('done');
`;

beforeAll(build);
afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('V8 allocation-site pretenuring is off (src/core/heap.ts, loaded first by main.js)', () => {
  let service: Service;
  beforeAll(async () => {
    service = await startService(TRACE, { BCRYPT_COST: '4' });
    await service.ready;
  });
  afterAll(() => stopService(service));

  it('the built heap.js turns it off: a workload V8 pretenures without it is never weighed with it', async () => {
    const heap = JSON.stringify(join(root, 'dist', 'src', 'core', 'heap.js'));
    const without = await runNode(TRACE, SURVIVORS, root);
    // The control: this V8 traces pretenuring, and this workload gets sites decided for tenuring
    // (Node 20 and 24's V8 reach `=> tenure`; Node 26's stops at `=> maybe tenure` on this workload).
    expect(without).toMatch(PRETENURING_LINE);
    expect(without).toMatch(/=> (maybe )?tenure/);
    const withHeap = await runNode(TRACE, `require(${heap});\n${SURVIVORS}`, root);
    expect(withHeap).toContain('done');
    expect(withHeap).not.toMatch(/unrecognized flag/i);
    expect(withHeap).not.toMatch(PRETENURING_LINE);
  });

  it('main.js loads heap.js before any other module', async () => {
    const main = readFileSync(join(root, 'dist', 'src', 'main.js'), 'utf8');
    expect(/require\(["']([^"']+)["']\)/.exec(main)?.[1]).toBe('./core/heap');
    // The control for the running service below: loading the service's modules allocates
    // enough for V8 to weigh sites, and heap.js loaded after them is too late.
    const app = JSON.stringify(join(root, 'dist', 'src', 'app.js'));
    const heap = JSON.stringify(join(root, 'dist', 'src', 'core', 'heap.js'));
    expect(await runNode(TRACE, `require('reflect-metadata'); require(${app}); require(${heap});`, root)).toMatch(PRETENURING_LINE);
  });

  it('the service started as npm start starts it never weighs a site: not while loading, not under requests', async () => {
    const { token } = (await rest(service.url(), 'POST', '/auth/register', { body: { name: 'Heap', email: uniqueEmail('heap'), password: 'password123' } })).body;
    for (let i = 0; i < 5; i++) expect((await rest(service.url(), 'POST', '/posts', { token, body: { title: `Post ${i}`, body: 'x'.repeat(2000) } })).status).toBe(201);
    for (let round = 0; round < 20; round++) {
      const answers = await Promise.all([
        ...Array.from({ length: 10 }, () => rest(service.url(), 'GET', '/posts')),
        rest(service.url(), 'GET', '/auth/me', { token }),
        fetch(`${service.url()}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ posts(page: 1) { data { id title user { name } } } }' }) }),
      ]);
      for (const a of answers) expect(a.status).toBe(200);
    }
    expect(service.output()).not.toMatch(/unrecognized flag/i);
    expect(service.output()).not.toMatch(PRETENURING_LINE);
  });
});

/** Per thread of process `pid`: nice value and CPU time so far (clock ticks), from /proc. */
function threads(pid: number): Map<number, { nice: number; cpu: number }> {
  const out = new Map<number, { nice: number; cpu: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    // Fields after the command name, which is in parentheses and may hold anything: state is field 3.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.set(Number(tid), { cpu: Number(f[14 - 3]) + Number(f[15 - 3]), nice: Number(f[19 - 3]) });
  }
  return out;
}

/** Registers, then sends `n` logins at once; returns the CPU time each thread spent meanwhile, with its nice value. */
async function loginBurst(s: Service, n: number) {
  const email = uniqueEmail('nice');
  expect((await rest(s.url(), 'POST', '/auth/register', { body: { name: 'Nice', email, password: 'password123' } })).status).toBe(201);
  const before = threads(s.child.pid!);
  const answers = await Promise.all(Array.from({ length: n }, () => rest(s.url(), 'POST', '/auth/login', { body: { email, password: 'password123' } })));
  for (const a of answers) expect(a.status).toBe(200);
  const after = threads(s.child.pid!);
  const spent = [...after].map(([tid, t]) => ({ tid, nice: t.nice, cpu: t.cpu - (before.get(tid)?.cpu ?? 0) }));
  const total = spent.reduce((sum, t) => sum + t.cpu, 0);
  const at = (nice: number) => spent.filter((t) => t.nice === nice).reduce((sum, t) => sum + t.cpu, 0);
  return { spent, total, at, main: after.get(s.child.pid!)! };
}

describe('libuv thread pool niced (src/core/threadpool-priority.ts, THREADPOOL_NICE)', () => {
  let niced: Service;
  let plain: Service;
  beforeAll(async () => {
    // Default cost 12 (~0.2 s of CPU per hash): the burst's CPU is almost all hashing.
    [niced, plain] = await Promise.all([startService([], {}), startService([], { THREADPOOL_NICE: '0' })]);
    await Promise.all([niced.ready, plain.ready]);
  });
  afterAll(() => Promise.all([stopService(niced), stopService(plain)]));

  it('bcrypt hashes of a login burst run on threads at nice 10 (the default); the event loop stays at 0', async () => {
    expect(niced.output()).not.toContain('could not lower the thread pool priority');
    const burst = await loginBurst(niced, 4);
    expect(burst.main.nice).toBe(0);
    // Four cost-12 compares: well over 0.4 s of CPU on the niced threads. Every other thread that
    // spent more than half a hash (~0.1 s) is the event loop: V8's compiler and GC threads, also
    // at nice 0, take a share that varies by line and load, so no ratio of the total is asserted.
    expect(burst.at(10)).toBeGreaterThanOrEqual(40);
    expect(burst.spent.filter((t) => t.nice !== 10 && t.tid !== niced.child.pid && t.cpu >= 10)).toEqual([]);
    expect(burst.spent.filter((t) => t.nice !== 0 && t.nice !== 10)).toEqual([]);
  });

  it('the control: with THREADPOOL_NICE=0 the same burst runs at nice 0, off the event loop thread', async () => {
    const burst = await loginBurst(plain, 4);
    expect(burst.spent.every((t) => t.nice === 0)).toBe(true);
    const mainSpent = burst.spent.find((t) => t.tid === plain.child.pid)!.cpu;
    expect(burst.total).toBeGreaterThanOrEqual(40);
    expect(mainSpent / burst.total).toBeLessThan(0.2);
    // What the niced service's check would catch: pool threads at nice 0 that hashed.
    expect(burst.spent.filter((t) => t.tid !== plain.child.pid && t.cpu >= 10).length).toBeGreaterThan(0);
  });
});
