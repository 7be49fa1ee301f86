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
  opts: { firstRunMs?: number } = {},
): BackgroundJob & { runNow(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let first: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = true;
  const tick = async () => {
    if (running || stopped) return running;
    running = task().catch(onError).finally(() => (running = undefined));
    return running;
  };
  return {
    name,
    start() {
      stopped = false;
      timer = setInterval(() => void tick(), intervalMs);
      timer.unref();
      if (opts.firstRunMs !== undefined && opts.firstRunMs < intervalMs) {
        first = setTimeout(() => void tick(), opts.firstRunMs);
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
      try { await tick(); } finally { stopped = was; }
    },
  };
}
