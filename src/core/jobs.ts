import type { MikroORM } from '@mikro-orm/postgresql';

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

/** Whether this instance should run `name`'s period now (see sharedPeriod). */
export type SharedPeriod = (name: string, periodMs: number) => Promise<boolean>;

/**
 * Once per period across every instance on the database: a scheduled run first
 * claims the period in job_runs, in one atomic statement, and only the instance whose claim
 * lands runs. "A period" is 90% of the interval, so that a timer firing a little early on its
 * next tick still finds it due. Between all instances the job runs at most about once per
 * interval, and, while any instance is up, never more than two intervals after its last run
 * (the instances' timers are not aligned). A claimant that dies before finishing loses that
 * period's run; these jobs are cleanups, so the next run does the work.
 */
export function sharedPeriod(orm: MikroORM): SharedPeriod {
  return async (name, periodMs) => {
    const due = Math.round(periodMs * 0.9);
    const rows = await orm.em.fork().execute<{ name: string }[]>(
      `insert into job_runs (name, ran_at) values (?, now())
       on conflict (name) do update set ran_at = now() where job_runs.ran_at <= now() - interval '1 millisecond' * ?
       returning name`,
      [name, due],
    );
    return rows.length === 1;
  };
}
