import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { benchConfig, serviceEnvironment } from './config';
import { repoRoot, startCommand } from './baseline';
import { call } from './http';
import type { ProbeSnapshot } from './memory-probe';
import type { PackageCost } from './memory-packages';
import { renderMemory, type MemoryMoment, type MemoryResults } from './memory-render';
import { distPath, nodeLine, nodeVersion, peakRssMb, startTarget, waitIdle, type Target } from './processes';
import { firstRequests, graphqlPosts } from './scenarios';
import { seed } from './seed';
import { renderDocs } from '../scripts/doc-blocks';

/**
 * `npm run bench:memory [-- --node <path>]`: where the service's memory goes. Seeds a scratch
 * database as `npm run bench` does (bench/seed.ts), starts the service exactly as the bench does
 * (npm start's flags, its production environment) with a preload that reports from inside the
 * process on a signal (bench/memory-probe.ts), and splits its RSS into file-backed memory, V8's
 * spaces and the rest of anonymous memory: at rest (after the start and one request) and
 * at the highest RSS sampled during a short full load on the GraphQL page. Then a child process
 * loads the service's dependencies one by one and says what each adds (bench/memory-packages.ts).
 * Writes bench/results/memory.json (memory-node26.json for another Node line, not rendered into
 * the docs), prints the Markdown (bench/memory-render.ts) and rewrites the docs' memory block.
 * Knobs: MEMORY_SECONDS (15), MEMORY_CONNECTIONS (50), and BENCH_SERVICE_ENV as for the bench
 * (`BENCH_SERVICE_ENV='NODE_OPTIONS=--max-semi-space-size=16'`: a V8 setting's effect on each part).
 */
const SECONDS = Number(process.env.MEMORY_SECONDS ?? 15);
const CONNECTIONS = Number(process.env.MEMORY_CONNECTIONS ?? 50);
/** How often the load's RSS is sampled through the probe. */
const SAMPLE_MS = 250;

const log = (msg: string) => process.stderr.write(`[memory ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const MB = 2 ** 20;

/** Asks the probe for a snapshot (SIGUSR2) and waits for its file. */
async function snapshot(t: Target, file: string): Promise<ProbeSnapshot> {
  rmSync(file, { force: true });
  process.kill(t.pid, 'SIGUSR2');
  const deadline = Date.now() + 10_000;
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`the probe wrote no ${file} in 10 s (was dist/bench/memory-probe.js preloaded?)`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return JSON.parse(readFileSync(file, 'utf8')) as ProbeSnapshot;
}

/**
 * RSS split by what holds it. File-backed (and shared) pages are mostly the node binary's code.
 * V8's spaces are counted by their physical size (pages committed and touched): the young
 * generation (new space), the old generation, large objects (young and old), and code, trusted,
 * read-only and shared spaces together. The rest of anonymous memory is what V8's heap is not:
 * malloc (V8's own and native modules'), Buffers outside the heap, thread stacks.
 */
function breakdown(s: ProbeSnapshot): MemoryMoment {
  const bucket = (name: string) =>
    /code|trusted|read_only|shared/.test(name) ? 'code' : name.includes('large_object') ? 'large' : name === 'new_space' ? 'young' : 'old';
  const v8 = { young: 0, old: 0, code: 0, large: 0 };
  for (const space of s.spaces) v8[bucket(space.space_name)] += space.physical_space_size / MB;
  const anon = (s.status.RssAnon ?? 0) / 1024;
  return {
    rssMb: (s.status.VmRSS ?? 0) / 1024,
    fileMb: ((s.status.RssFile ?? 0) + (s.status.RssShmem ?? 0)) / 1024,
    youngMb: v8.young,
    oldMb: v8.old,
    codeMb: v8.code,
    largeMb: v8.large,
    otherAnonMb: anon - v8.young - v8.old - v8.code - v8.large,
    mallocedMb: s.heap.malloced_memory / MB,
    externalMb: s.memoryUsage.external / MB,
    heapUsedMb: s.heap.used_heap_size / MB,
    spaces: s.spaces.map((x) => ({ name: x.space_name, sizeMb: x.space_size / MB, usedMb: x.space_used_size / MB, physicalMb: x.physical_space_size / MB })),
  };
}

/** The child process of bench/memory-packages.ts, on the service's Node. */
function packageCosts(node: string): PackageCost[] {
  const res = spawnSync(node, ['--expose-gc', distPath('bench', 'memory-packages.js')], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, NODE_ENV: 'production' } });
  if (res.status !== 0) throw new Error(`memory-packages failed: ${res.stderr}`);
  return JSON.parse(res.stdout) as PackageCost[];
}

async function main(): Promise<void> {
  const node = benchConfig.node ?? process.execPath;
  const version = nodeVersion(node);
  const name = nodeLine(version) === nodeLine(process.version) ? 'memory' : `memory-node${nodeLine(version)}`;
  const work = mkdtempSync(join(tmpdir(), 'blog-memory-'));
  const probeFile = join(work, 'probe.json');
  const command = startCommand(repoRoot);
  const flags = [...command.flags, '-r', distPath('bench', 'memory-probe.js')];
  const db = await seed(log);
  let t: Target | undefined;
  const stop = async () => {
    await t?.stop();
    await db.close();
    rmSync(work, { recursive: true, force: true });
  };
  process.once('SIGINT', () => void stop().finally(() => process.exit(130)));
  let rest: MemoryMoment, peak: MemoryMoment, hwm: number, rps: number, errors: number;
  try {
    log(`service: ${node} ${[...flags, 'dist/src/main.js'].join(' ')} (npm start's flags and the probe)`);
    if (Object.keys(benchConfig.serviceEnv).length) log(`service env: ${JSON.stringify(benchConfig.serviceEnv)}`);
    t = await startTarget('service', distPath('src', 'main.js'), { ...command.env, ...serviceEnvironment(db.url, join(work, 'data')), ...benchConfig.serviceEnv, MEMORY_PROBE_FILE: probeFile }, flags, node);
    for (const r of firstRequests('service')) await call(t.url, r.method, r.path, { headers: { ...r.headers }, body: r.body });
    await waitIdle([t.pid], 5_000);
    rest = breakdown(await snapshot(t, probeFile));
    log(`at rest: RSS ${rest.rssMb.toFixed(1)} MB`);
    // The load, sampled through the probe; the sample with the highest RSS is the peak.
    const load = autocannon({ url: t.url, connections: CONNECTIONS, duration: SECONDS, timeout: 30, requests: [{ setupRequest: (req) => ({ ...req, ...graphqlPosts(1) }) }] });
    let done = false;
    // Handled here, awaited (and so thrown) below.
    load.then(() => (done = true), () => (done = true));
    let top: ProbeSnapshot | undefined;
    while (!done) {
      const s = await snapshot(t, probeFile);
      if (!top || s.status.VmRSS > top.status.VmRSS) top = s;
      await new Promise((r) => setTimeout(r, SAMPLE_MS));
    }
    const result = await load;
    rps = result.requests.total / result.duration;
    errors = result.errors + result.non2xx;
    hwm = peakRssMb(t.pid);
    peak = breakdown(top!);
    log(`load: ${rps.toFixed(0)} req/s, ${errors} errors; highest sampled RSS ${peak.rssMb.toFixed(1)} MB, VmHWM ${hwm.toFixed(1)} MB`);
  } finally {
    await stop();
  }
  log('loading the dependencies one by one (bench/memory-packages.ts)');
  const packages = packageCosts(node);
  const tree = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' });
  const results: MemoryResults = {
    schemaVersion: 1,
    run: {
      date: new Date().toISOString(),
      commit: tree.status === 0 ? tree.stdout.trim() : null,
      node: version,
      cores: benchConfig.cores,
      serviceCommand: command.text,
      serviceEnv: benchConfig.serviceEnv,
      load: 'GraphQL posts(page: 1)',
      seconds: SECONDS,
      connections: CONNECTIONS,
      reqPerSec: rps,
      errors,
    },
    rest,
    peak,
    peakHwmMb: hwm,
    packages,
  };
  const dir = join(repoRoot, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.json`), JSON.stringify(results, null, 2) + '\n');
  process.stdout.write(renderMemory(results) + '\n');
  if (name === 'memory') {
    const rewritten = renderDocs(repoRoot, ['memory']);
    log(rewritten.length ? `rewrote the memory block of ${rewritten.map((p) => p.slice(repoRoot.length + 1)).join(', ')}` : 'the memory block of the docs was already these figures');
  } else log(`wrote bench/results/${name}.json (the docs show the bench's own Node line)`);
}

main().catch((err) => {
  process.stderr.write(`memory failed: ${(err as Error)?.stack ?? err}\n`);
  process.exit(1);
});
