/**
 * The performance tricks the service keeps, each held to what it relies on, so that none can
 * stop working silently:
 *
 * - src/core/heap.ts turns off V8's allocation-site pretenuring, and main.js loads it before
 *   anything else. Seen through V8's own trace (--trace-pretenuring-statistics): V8 weighs its
 *   allocation sites after young collections only while the flag is on, so with it off not one
 *   line is printed, while the same code without heap.js prints them.
 * - src/core/threadpool-priority.ts nices libuv's thread pool: bcrypt's hashes of a real login
 *   burst run on threads whose nice value is THREADPOOL_NICE, and the event loop's is 0
 *   (/proc/<pid>/task/<tid>/stat, per-thread CPU time and nice value).
 * - the token cache of src/modules/auth/auth.tokens.ts: a token is verified once (jsonwebtoken's
 *   verify is counted), and from the cache it still expires and is still revoked by a password
 *   reset or an account deletion, on both surfaces.
 * - src/db/embedded.ts starts PostgreSQL with fixed glibc malloc thresholds (MALLOC_TRIM_THRESHOLD_,
 *   MALLOC_MMAP_THRESHOLD_): the postmaster runs with them (/proc/<pid>/environ) and forks every backend,
 *   and an operator's own values win.
 * - Results die young: mikro-orm.config.ts gives pg no query_timeout, and the service's own
 *   statements outside a transaction run through pg's `pool.query` (src/db/named-statements.ts
 *   runPooled). With pg's per-query timer, or through a client's promise form (as Kysely calls
 *   it), nearly every result outlived two young collections under load and went to the old
 *   generation (V8's --trace-gc-nvp: promoted against allocated bytes); the controls show both.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import jwt from 'jsonwebtoken';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded';
import { createTestDatabase, startTestApp, type TestApp } from './support/harness';
import { clients, rest } from './support/client';
import { buildUser, uniqueEmail } from './support/factories';
import { followStart, type FollowedStart } from './support/follow-start';
import { resetSecretOf, startMailbox, type Mailbox } from './support/mailbox';
import { builtService } from './support/service-build';
import { settled, until } from './support/wait';

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

/**
 * `code` in a child Node with `args`: its stdout and stderr. Asynchronous, so that while it runs
 * (seconds, on a busy machine) this worker keeps reading the output of the service the tests
 * below start, and keeps its sockets to it serviced.
 */
function runNode(args: string[], code: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...args, '-e', code], { encoding: 'utf8', cwd: root, timeout: 60_000, maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`node failed (${String(err.code ?? err.signal)}): ${stderr}`));
      else resolve(stdout + stderr);
    });
  });
}

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
    const without = await runNode(TRACE, SURVIVORS);
    // The control: this V8 traces pretenuring, and this workload gets sites decided for tenuring
    // (Node 20 and 24's V8 reach `=> tenure`; Node 26's stops at `=> maybe tenure` on this workload).
    expect(without).toMatch(PRETENURING_LINE);
    expect(without).toMatch(/=> (maybe )?tenure/);
    const withHeap = await runNode(TRACE, `require(${heap});\n${SURVIVORS}`);
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
    expect(await runNode(TRACE, `require('reflect-metadata'); require(${app}); require(${heap});`)).toMatch(PRETENURING_LINE);
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

describe('token cache (src/modules/auth/auth.tokens.ts)', () => {
  let app: TestApp;
  let api: ReturnType<typeof clients>;
  let mailbox: Mailbox;
  let verify: jest.SpyInstance;
  const ME = '{ me { id } }';

  beforeAll(async () => {
    mailbox = await startMailbox();
    app = await startTestApp({ SMTP_URL: mailbox.url });
    api = clients(app.url);
  });
  beforeEach(() => {
    verify = jest.spyOn(jwt, 'verify');
  });
  afterEach(() => verify.mockRestore());
  afterAll(async () => {
    await app.close();
    await mailbox.close();
  });

  const expectAccepted = async (token: string, id: number) => {
    const me = await api.rest('GET', '/auth/me', { token });
    expect([me.status, me.body?.id]).toEqual([200, id]);
    expect((await api.gql(ME, {}, { token })).data).toEqual({ me: { id } });
  };
  const expectRefused = async (token: string, message: string) => {
    const me = await api.rest('GET', '/auth/me', { token });
    expect([me.status, me.body]).toEqual([401, { message }]);
    expect((await api.gql(ME, {}, { token })).errors?.[0]).toMatchObject({ message, extensions: { code: 'UNAUTHENTICATED' } });
  };

  it('a token is verified once, then answered from the cache on both surfaces; a bad one is verified (and refused) every time', async () => {
    const { user, password } = await buildUser(app);
    const token = (await api.rest('POST', '/auth/login', { body: { email: user.email, password } })).body.token as string;
    verify.mockClear();
    for (let i = 0; i < 3; i++) await expectAccepted(token, user.id);
    expect(verify).toHaveBeenCalledTimes(1);

    const [head, body] = token.split('.');
    const forged = `${head}.${body}.${Buffer.from('not the signature').toString('base64url')}`;
    verify.mockClear();
    for (let i = 0; i < 2; i++) await expectRefused(forged, 'Invalid token');
    expect(verify).toHaveBeenCalledTimes(4);
  });

  it('a cached token still expires', async () => {
    const { user } = await buildUser(app);
    // Expires at the start of the second after next: accepted now, refused within ~2 s.
    const exp = Math.floor(Date.now() / 1000) + 2;
    const token = jwt.sign({ id: user.id, tv: user.tokenVersion, exp }, app.config.jwtSecret!, { algorithm: 'HS256' });
    verify.mockClear();
    await expectAccepted(token, user.id);
    expect(verify).toHaveBeenCalledTimes(1);
    await until(() => Date.now() > exp * 1000 + 50, "the token's exp to pass", { ms: 5_000 });
    await expectRefused(token, 'Invalid token');
    // Refused from the cache: its exp was checked there, not by a second verify.
    expect(verify).toHaveBeenCalledTimes(1);
  });

  it('a cached token is revoked at once by a password reset (token version) and by deleting the account, on both surfaces', async () => {
    const { user, password } = await buildUser(app);
    const token = (await api.rest('POST', '/auth/login', { body: { email: user.email, password } })).body.token as string;
    verify.mockClear();
    await expectAccepted(token, user.id);

    expect((await api.rest('POST', '/auth/forgot-password', { body: { email: user.email } })).status).toBe(200);
    const [mail] = await mailbox.waitFor(user.email, 'Reset your password');
    expect((await api.rest('POST', '/auth/reset-password', { body: { token: resetSecretOf(mail), password: 'brand-new-pass' } })).status).toBe(200);
    await expectRefused(token, 'Invalid token');
    expect(verify).toHaveBeenCalledTimes(1);

    const fresh = (await api.rest('POST', '/auth/login', { body: { email: user.email, password: 'brand-new-pass' } })).body.token as string;
    await expectAccepted(fresh, user.id);
    const admin = (await buildUser(app, { role: 'admin' })).token;
    expect((await api.rest('DELETE', `/admin/users/${user.id}`, { token: admin })).status).toBe(200);
    await expectRefused(fresh, 'User not found');
  });
});

describe('glibc malloc thresholds of the embedded PostgreSQL (src/db/embedded.ts)', () => {
  const NAMES = ['MALLOC_TRIM_THRESHOLD_', 'MALLOC_MMAP_THRESHOLD_'];

  /** The malloc variables of a fresh embedded cluster's postmaster, started with `env` set in this process. */
  async function backendMalloc(env: Record<string, string>): Promise<Record<string, string>> {
    const saved = Object.fromEntries(NAMES.map((n) => [n, process.env[n]]));
    for (const n of NAMES) delete process.env[n];
    Object.assign(process.env, env);
    const dir = mkdtempSync(join(tmpdir(), 'blog-malloc-'));
    try {
      const db = await startEmbeddedPostgres({ dataDir: dir, durable: false });
      const client = new pg.Client({ connectionString: db.url });
      try {
        await client.connect();
        const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
        // The postmaster's: a backend writes its ps title over its own copy. Backends are forked, so they share its malloc settings.
        const postmaster = readFileSync(`/proc/${rows[0].pid}/stat`, 'utf8').split(') ')[1].split(' ')[1];
        const environ = readFileSync(`/proc/${postmaster}/environ`, 'utf8').split('\0').map((v) => v.split('='));
        return Object.fromEntries(environ.filter(([k]) => NAMES.includes(k)));
      } finally {
        await client.end();
        await db.stop();
      }
    } finally {
      for (const n of NAMES) {
        if (saved[n] === undefined) delete process.env[n];
        else process.env[n] = saved[n];
      }
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('the postmaster, and so every backend it forks, runs with a fixed trim and mmap threshold', async () => {
    expect(await backendMalloc({})).toEqual({ MALLOC_TRIM_THRESHOLD_: '67108864', MALLOC_MMAP_THRESHOLD_: '33554432' });
  });

  it("the operator's own values win", async () => {
    expect(await backendMalloc({ MALLOC_TRIM_THRESHOLD_: '1048576' })).toEqual({ MALLOC_TRIM_THRESHOLD_: '1048576', MALLOC_MMAP_THRESHOLD_: '33554432' });
  });
});

describe("results that die young: the pool without query_timeout, the service's statements through pool.query (mikro-orm.config.ts, src/db/named-statements.ts)", () => {
  /**
   * 50 requests' worth of statements at once, each answering a 20 KB text (a first page's size),
   * RUNS_PER_WORKER each (a count, not a time: a busy machine makes the load slower, not smaller), through a
   * pg pool of 10 with the service's driver options plus `extra`, under V8's GC trace: the share
   * of what the young generation allocated during the load that it promoted to the old one.
   * `via`: pg's `pool.query` (a callback inside, as runPooled runs every statement of the
   * service's own outside a transaction), or a checked-out client's `query` without a callback
   * (the promise form, as Kysely runs the ORM's).
   */
  const RUNS_PER_WORKER = 100;
  async function promotedShare(url: string, extra: Record<string, unknown>, via: 'pool.query' | 'client promise'): Promise<number> {
    const config = JSON.stringify(join(root, 'dist', 'mikro-orm.config.js'));
    const code = `
      const { Pool } = require('pg');
      const { ormConfig } = require(${config});
      const options = { ...ormConfig({ clientUrl: ${JSON.stringify(url)} }).driverOptions, ...${JSON.stringify(extra)} };
      const pool = new Pool({ connectionString: ${JSON.stringify(url)}, max: 10, ...options });
      const sql = "select repeat('x', 20000) as json";
      const once = ${JSON.stringify(via)} === 'pool.query'
        ? () => pool.query(sql, [])
        : async () => { const client = await pool.connect(); try { return await client.query(sql, []); } finally { client.release(); } };
      (async () => {
        await Promise.all(Array.from({ length: 10 }, () => pool.query('select 1')));
        console.log('LOAD');
        const worker = async () => { for (let i = 0; i < ${RUNS_PER_WORKER}; i++) await once(); };
        await Promise.all(Array.from({ length: 50 }, worker));
        await pool.end();
      })();
    `;
    const out = await runNode(['--trace-gc-nvp'], code);
    let promoted = 0;
    let allocated = 0;
    let load = 0;
    // Node 24 prints name=value pairs, Node 26 JSON: the young collections after the pool is warm.
    for (const line of out.slice(out.indexOf('LOAD')).split('\n')) {
      const since = /allocated"?[=:](\d+)/.exec(line);
      if (!since) continue;
      // The load's size counts every collection's: what was allocated before a full one is not in any young one's.
      load += Number(since[1]);
      if (!/gc=s |"gc":"s"/.test(line)) continue;
      promoted += Number(/promoted"?[=:](\d+)/.exec(line)![1]);
      allocated += Number(since[1]);
    }
    expect(load).toBeGreaterThan(100 * 1024 * 1024);
    return promoted / allocated;
  }

  let url: string;
  beforeAll(async () => {
    url = await createTestDatabase();
  });

  it("with the service's options and pool.query, a result dies young: under 5% of what the load allocates is promoted", async () => {
    expect(await promotedShare(url, {}, 'pool.query')).toBeLessThan(0.05);
  });

  it("the control: with pg's query_timeout (a timer per query) the same load promotes over a third of it", async () => {
    expect(await promotedShare(url, { query_timeout: 35_000 }, 'pool.query')).toBeGreaterThan(0.35);
  });

  it("the control: through a client's promise form (Kysely's way) the same load promotes over a third of it", async () => {
    expect(await promotedShare(url, {}, 'client promise')).toBeGreaterThan(0.35);
  });
});
