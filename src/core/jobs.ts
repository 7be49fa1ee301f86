/** A periodic background task (mail outbox, trash retention). Started by main.ts and the test harness. */
export interface BackgroundJob {
  name: string;
  start(): void;
  /** Stops scheduling and waits for a run in progress. */
  stop(): Promise<void>;
}

/**
 * Runs `task` every `intervalMs` (never overlapping itself); errors are reported, not thrown.
 * `firstRunMs` runs it once that soon after start as well: with a long interval, an instance
 * restarted more often than the interval would otherwise never run it at all.
 */
export function intervalJob(
  name: string,
  intervalMs: number,
  task: () => Promise<void>,
  onError: (err: unknown) => void,
  opts: { firstRunMs?: number; shared?: SharedPeriod } = {},
): BackgroundJob & { runNow(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let first: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = true;
  const tick = async (scheduled: boolean) => {
    if (running || stopped) return running;
    const run = async () => {
      // Scheduled runs are shared with the other instances; runNow is an explicit request.
      if (scheduled && opts.shared && !(await opts.shared(name, intervalMs))) return;
      await task();
    };
    running = run().catch(onError).finally(() => (running = undefined));
    return running;
  };
  return {
    name,
    start() {
      stopped = false;
      timer = setInterval(() => void tick(true), intervalMs);
      timer.unref();
      if (opts.firstRunMs !== undefined && opts.firstRunMs < intervalMs) {
        first = setTimeout(() => void tick(true), opts.firstRunMs);
        first.unref();
      }
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      if (first) clearTimeout(first);
      await running;
    },
    async runNow() {
      if (running) await running;
      const was = stopped;
      stopped = false;
      try { await tick(false); } finally { stopped = was; }
    },
  };
}

/** Whether this instance should run `name`'s period now (db/jobs.ts sharedPeriod). */
export type SharedPeriod = (name: string, periodMs: number) => Promise<boolean>;
