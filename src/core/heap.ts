import { setFlagsFromString } from 'node:v8';

/**
 * Imported first by main.ts, before anything allocates: turns off V8's allocation-site
 * pretenuring for this process.
 *
 * V8 watches which allocation sites' objects survive a young-generation collection and, past a
 * threshold, allocates everything from such a site in the old generation from then on. A service
 * fools it at start: its first requests wait for new database connections, so every object of
 * the request path survives and its sites are tenured for good. Each later request then leaves
 * its context, statement values and promises to the full collections, and the old generation
 * grows under load (docs/performance.md, "Memory"). V8 reads the flag each time it weighs the
 * sites, so setting it at run time works; a V8 without it prints "unrecognized flag" once and
 * runs on as before.
 */
setFlagsFromString('--no-allocation-site-pretenuring');

type Gc = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/**
 * Gives the heap's spare memory back to the system: the full collection V8 runs when memory is
 * short (several passes; bytecode of functions not run lately flushed; the young generation
 * shrunk back to its initial size; free pages returned). V8 never runs it on its own in a process
 * that is merely idle, so a service keeps the young generation its busiest minute grew, and the
 * start's garbage, for good. Needs the `gc` function that `--expose-gc` (npm start's flags)
 * exposes; without it (an app the tests start in their own process) this does nothing.
 * Synchronous: call it where nothing waits (before listening, or when idle).
 */
export function releaseMemory(): boolean {
  const gc = (globalThis as { gc?: Gc }).gc;
  if (typeof gc !== 'function') return false;
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  return true;
}

/**
 * Releases memory (releaseMemory) once the process has served and then been idle for `idleMs`:
 * no request started and none running. `served` counts the work started so far (requests,
 * WebSocket connections and subscribes), `running` the requests still running. Checked a few
 * times per period on a timer that keeps no process alive; returns the function that stops it.
 */
export function releaseWhenIdle(work: { served(): number; running(): number }, idleMs: number, onRelease: (ms: number) => void): () => void {
  let seen = work.served();
  let released = seen;
  let quietSince = Date.now();
  const timer = setInterval(() => {
    const served = work.served();
    if (served !== seen || work.running() > 0) {
      seen = served;
      quietSince = Date.now();
      return;
    }
    if (served === released || Date.now() - quietSince < idleMs) return;
    released = served;
    const started = performance.now();
    if (releaseMemory()) onRelease(performance.now() - started);
  }, Math.max(100, Math.round(idleMs / 4)));
  timer.unref();
  return () => clearInterval(timer);
}
