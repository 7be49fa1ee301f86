/**
 * The performance tricks the service keeps that are about memory, each held to what it relies on
 * (the others: test/tricks.test.ts, test/tricks-tokens.test.ts):
 *
 * - src/db/embedded.ts starts PostgreSQL with fixed glibc malloc thresholds (MALLOC_TRIM_THRESHOLD_,
 *   MALLOC_MMAP_THRESHOLD_): the postmaster runs with them (/proc/<pid>/environ) and forks every backend,
 *   and an operator's own values win.
 * - Results die young: mikro-orm.config.ts gives pg no query_timeout, and the service's own
 *   statements outside a transaction run through pg's `pool.query` (src/db/named-statements.ts
 *   runPooled). With pg's per-query timer, or through a client's promise form (as Kysely calls
 *   it), nearly every result outlived two young collections under load and went to the old
 *   generation (V8's --trace-gc-nvp: promoted against allocated bytes); the controls show both.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded';
import { createTestDatabase } from './support/harness';
import { runNode } from './support/node-child';
import { builtService } from './support/service-build';

jest.setTimeout(120_000);

/** The build `npm start` runs (the run's shared one): its mikro-orm.config.js gives the pool's driver options. */
let root: string;
beforeAll(() => {
  root = builtService();
});

describe('glibc malloc thresholds of the embedded PostgreSQL (src/db/embedded.ts)', () => {
  const NAMES = ['MALLOC_TRIM_THRESHOLD_', 'MALLOC_MMAP_THRESHOLD_'];
  // One cluster for both tests (initdb once); each starts its own postmaster on it.
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'blog-malloc-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The malloc variables of the embedded cluster's postmaster, started with `env` set in this process. */
  async function backendMalloc(env: Record<string, string>): Promise<Record<string, string>> {
    const saved = Object.fromEntries(NAMES.map((n) => [n, process.env[n]]));
    for (const n of NAMES) delete process.env[n];
    Object.assign(process.env, env);
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
    const out = await runNode(['--trace-gc-nvp'], code, root);
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
