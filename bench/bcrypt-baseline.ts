import bcrypt from 'bcrypt';

/**
 * What bcrypt alone allows on this machine: compares at cost 12 with every core busy.
 * Run as a child process with UV_THREADPOOL_SIZE = cores (the pool size is fixed at start).
 * Prints one JSON line: {perSecond, threads}.
 */
async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 5);
  const threads = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
  const hash = await bcrypt.hash('bench-password-1', 12);
  await Promise.all(Array.from({ length: threads }, () => bcrypt.compare('bench-password-1', hash)));
  let done = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  // Twice as many in flight as threads, so the pool never idles between compares.
  await Promise.all(
    Array.from({ length: threads * 2 }, async () => {
      while (performance.now() < until) {
        await bcrypt.compare('bench-password-1', hash);
        done++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  process.stdout.write(JSON.stringify({ perSecond: done / elapsed, threads }) + '\n');
}

void main();
