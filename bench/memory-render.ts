/**
 * bench/results/memory.json (`npm run bench:memory`, bench/memory.ts) and its rendering: the
 * Markdown `npm run bench:memory` prints and the memory block of docs/performance.md
 * (scripts/doc-blocks.ts), a pure function of the JSON. Imports nothing at run time.
 */

/** The service's RSS at one moment, split by what holds it (MB). */
export interface MemoryMoment {
  /** VmRSS. */
  rssMb: number;
  /** RssFile + RssShmem: mapped files (the node binary, shared libraries) and shared memory. */
  fileMb: number;
  /** V8's spaces by physical size (pages committed and touched): new space, old space, code + trusted + read-only + shared, large objects. */
  youngMb: number;
  oldMb: number;
  codeMb: number;
  largeMb: number;
  /** RssAnon less V8's spaces: malloc, Buffers outside the heap, thread stacks. */
  otherAnonMb: number;
  /** Part of the rest: what V8 itself allocated with malloc, and memory outside the heap held by JavaScript objects (Buffers). */
  mallocedMb: number;
  externalMb: number;
  /** Live and not yet collected objects in V8's heap. */
  heapUsedMb: number;
  /** Every V8 space as v8.getHeapSpaceStatistics() gave it. */
  spaces: { name: string; sizeMb: number; usedMb: number; physicalMb: number }[];
}

export interface MemoryResults {
  schemaVersion: 1;
  run: {
    /** When the run ended (ISO 8601). */
    date: string;
    commit: string | null;
    node: string;
    cores: number;
    /** `node <flags> dist/src/main.js`: npm start's command (the probe's `-r` added to it). */
    serviceCommand: string;
    /** BENCH_SERVICE_ENV: environment added to the bench's (an experiment's NODE_OPTIONS); absent in a file written before it was recorded. */
    serviceEnv?: Record<string, string>;
    /** The request of the load, its seconds and connections, the req/s it got and its errors (socket errors, timeouts, non-2xx). */
    load: string;
    seconds: number;
    connections: number;
    reqPerSec: number;
    errors: number;
  };
  /** After the start and one request (the REST first page), before any load. */
  rest: MemoryMoment;
  /** The sample with the highest RSS during the load (sampled every 250 ms). */
  peak: MemoryMoment;
  /** VmHWM once the load was over: the peak between samples too. */
  peakHwmMb: number;
  /** What each dependency adds when loaded after the ones above it (bench/memory-packages.ts): V8 heap in use, anonymous RSS but the young generation's; the first row is node with its built-in modules. */
  packages: { name: string; heapMb: number; anonMb: number }[];
}

const f1 = (n: number) => n.toFixed(1);

/** The Markdown of a memory run (no trailing newline). */
export function renderMemory(r: MemoryResults): string {
  const m = r.run;
  const row = (label: string, pick: (x: MemoryMoment) => number) => `| ${label} | ${f1(pick(r.rest))} | ${f1(pick(r.peak))} |`;
  const extra = Object.entries(m.serviceEnv ?? {}).map(([k, v]) => `${k}=${v}`).join(' ');
  return [
    `Run of ${m.date.slice(0, 10)}${m.commit ? ` on commit ${m.commit.slice(0, 10)}` : ''}, Node ${m.node}, ${m.cores} cores (\`npm run bench:memory\`): the service as \`${m.serviceCommand}\` in production${extra ? ` with \`${extra}\`` : ''}, ` +
      `at rest (started, the REST first page answered) and at the highest RSS sampled during ${m.seconds} s of ${m.load} at ${m.connections} connections ` +
      `(${m.reqPerSec.toFixed(0)} req/s, ${m.errors} errors; VmHWM ${f1(r.peakHwmMb)} MB).`,
    '',
    '| RSS, MB | at rest | at the peak |',
    '|---|---:|---:|',
    row('file-backed: the node binary, libraries', (x) => x.fileMb),
    row('V8 young generation (new space)', (x) => x.youngMb),
    row('V8 old generation (old space)', (x) => x.oldMb),
    row('V8 code, trusted, read-only spaces', (x) => x.codeMb),
    row('V8 large objects', (x) => x.largeMb),
    row('rest of anonymous memory: malloc, Buffers, stacks', (x) => x.otherAnonMb),
    row('of which V8\'s own malloc', (x) => x.mallocedMb),
    row('of which external to the heap (Buffers)', (x) => x.externalMb),
    row('**RSS**', (x) => x.rssMb),
    row('V8 heap in use (live and not yet collected)', (x) => x.heapUsedMb),
    '',
    'What loading each dependency adds, in this order, after full collections (a process of its own, `--expose-gc`; a module two packages share counts where it first loads):',
    '',
    '| loaded | V8 heap MB | anonymous RSS but the young generation, MB |',
    '|---|---:|---:|',
    ...r.packages.map((p) => `| ${p.name} | ${f1(p.heapMb)} | ${f1(p.anonMb)} |`),
  ].join('\n');
}
