import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';

/**
 * Preloaded into the service by `npm run bench:memory` (`node -r dist/bench/memory-probe.js`,
 * bench/memory.ts): on SIGUSR2 it writes what only the process itself can see, V8's spaces and
 * statistics and process.memoryUsage(), together with its /proc/self/status read at the same
 * moment, to MEMORY_PROBE_FILE (a temporary name first, then renamed: the reader never sees half a
 * file). It loads nothing but node:fs and node:v8 and does nothing until signalled; a signal
 * handler does not keep the process alive.
 */
export interface ProbeSnapshot {
  /** /proc/self/status fields in kB (VmRSS, VmHWM, RssAnon, RssFile, RssShmem, ...). */
  status: Record<string, number>;
  memoryUsage: NodeJS.MemoryUsage;
  heap: ReturnType<typeof getHeapStatistics>;
  spaces: ReturnType<typeof getHeapSpaceStatistics>;
}

const file = process.env.MEMORY_PROBE_FILE;
if (file) {
  process.on('SIGUSR2', () => {
    const status: Record<string, number> = {};
    for (const m of readFileSync('/proc/self/status', 'utf8').matchAll(/^(\w+):\s+(\d+) kB$/gm)) status[m[1]] = Number(m[2]);
    const snapshot: ProbeSnapshot = { status, memoryUsage: process.memoryUsage(), heap: getHeapStatistics(), spaces: getHeapSpaceStatistics() };
    writeFileSync(`${file}.tmp`, JSON.stringify(snapshot));
    renameSync(`${file}.tmp`, file);
  });
}
