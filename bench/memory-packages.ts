import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';

/**
 * Run by `npm run bench:memory` (bench/memory.ts) as `node --expose-gc dist/bench/memory-packages.js`
 * in a process of its own: what loading each top-level dependency of the service adds to the V8
 * heap (used, after full collections) and to anonymous RSS, one after the other in the order
 * below, then the service's own modules (dist/src/app.js, with whatever they load that no row
 * above did). Each row is what its require adds given the rows above it: a module two packages
 * share is counted once, where it first loads. Node's own built-in modules are loaded before the
 * first row, so that the first package is not charged with them. Anonymous RSS less the young
 * generation's pages: what a package allocates while it loads can grow the young generation, whose
 * pages stay after the collection empties it (bench/memory.ts shows that space apart), and the
 * pages of the node binary a first use faults in are file-backed and no package's.
 * Prints the rows as JSON on stdout.
 */
const load = createRequire(__filename);

/** The built-in modules the packages below use, loaded with node itself. */
const BUILTINS = ['http', 'https', 'net', 'tls', 'dns', 'crypto', 'stream', 'zlib', 'fs', 'path', 'url', 'util', 'events', 'os', 'child_process', 'worker_threads', 'async_hooks', 'diagnostics_channel'];

/** In load order: label, then what to require. reflect-metadata comes before type-graphql, which needs it, as main.ts loads it first. */
const STEPS: [string, string[]][] = [
  ['express', ['express']],
  ['zod', ['zod']],
  ['pg', ['pg']],
  ['@mikro-orm/postgresql', ['@mikro-orm/postgresql']],
  ['graphql', ['graphql']],
  ['reflect-metadata', ['reflect-metadata']],
  ['type-graphql', ['type-graphql']],
  ['@apollo/server', ['@apollo/server']],
  ['pino', ['pino']],
  ['prom-client', ['prom-client']],
  ['jsonwebtoken', ['jsonwebtoken']],
  ['nodemailer', ['nodemailer']],
  ['graphql-ws + ws', ['ws', 'graphql-ws/use/ws']],
  ['the service (dist/src/app.js)', ['../src/app.js']],
];

export interface PackageCost {
  name: string;
  heapMb: number;
  /** Anonymous RSS (RssAnon) less the young generation's pages. */
  anonMb: number;
}

const gc = globalThis.gc;
/** V8 heap in use and anonymous RSS but the young generation's (MB) after two full collections (the second frees what the first's finalizers let go). */
function settled(): { heap: number; anon: number } {
  gc!();
  gc!();
  const anonKb = Number(/^RssAnon:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
  const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.physical_space_size ?? 0;
  return { heap: getHeapStatistics().used_heap_size / 2 ** 20, anon: anonKb / 1024 - young / 2 ** 20 };
}

if (!gc) throw new Error('run with --expose-gc');
for (const m of BUILTINS) load(`node:${m}`);
let before = settled();
const rows: PackageCost[] = [{ name: 'node and its built-in modules', heapMb: before.heap, anonMb: before.anon }];
for (const [name, modules] of STEPS) {
  for (const m of modules) load(m);
  const after = settled();
  rows.push({ name, heapMb: after.heap - before.heap, anonMb: after.anon - before.anon });
  before = after;
}
process.stdout.write(JSON.stringify(rows));
