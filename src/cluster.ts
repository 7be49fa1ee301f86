import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { Config } from './config/config';
import { AppError } from './core/errors';
import type { Logger } from './core/logger';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './db/embedded';
import { migrateDatabase } from './db/orm';
import { announceServiceUrl } from './core/service-url';
import { ReplicaMonitor, type ReadRouting, type ReplicaState } from './db/replicas';

/**
 * WEB_CONCURRENCY > 1: this process is the primary of node:cluster. It serves no HTTP itself;
 * it owns what must exist once (the embedded PostgreSQL, the migrations), forks the workers
 * that share the port (each runs main.ts's server), replaces a worker that dies, and on
 * SIGTERM/SIGINT lets every worker drain before it stops the database.
 *
 * What an idle instance asks of the database does not grow with the workers: the
 * replicas' lag is measured here, once, and told to every worker after each probe; the
 * background jobs (the mail outbox and its LISTEN, the cleanups, trash retention) run in one
 * worker, chosen here among those that asked, and handed to another when it dies. (Across
 * instances they stay safe as before: the outbox is claimed with FOR UPDATE SKIP LOCKED, periods
 * are claimed in job_runs.) /metrics, answered by any worker, is the sum over all workers, made
 * here with prom-client's AggregatorRegistry.
 *
 * Log lines carry `worker`: the writer, a worker's id or "primary"; the primary's lines about a
 * worker name it `workerId`.
 */

const METRICS_REQUEST = 'blog-api:metrics-request';
const METRICS_REPLY = 'blog-api:metrics-reply';
/** Deaths within this window count towards the replacement backoff. */
const CRASH_WINDOW_MS = 60_000;
const MAX_BACKOFF_MS = 30_000;

/** worker → primary: send me the replicas' states (then every probe's); primary → worker: these are they. */
const REPLICAS_REQUEST = 'blog-api:replicas-request';
const REPLICAS = 'blog-api:replicas';
/** worker → primary: I can run the background jobs; primary → worker: run them. */
const JOBS_REQUEST = 'blog-api:jobs-request';
const JOBS_RUN = 'blog-api:jobs-run';

interface MetricsRequest { type: typeof METRICS_REQUEST; id: number }
interface MetricsReply { type: typeof METRICS_REPLY; id: number; text?: string; error?: string }
interface ReplicasMessage { type: typeof REPLICAS; states: ReplicaState[] }
type WorkerMessage = MetricsRequest | { type: typeof REPLICAS_REQUEST } | { type: typeof JOBS_REQUEST };

export async function runPrimary(config: Readonly<Config>, log: Logger, jwtSecret: string): Promise<void> {
  let embedded: EmbeddedPostgres | undefined;
  let databaseUrl = config.databaseUrl;
  let directUrl = config.databaseDirectUrl;
  if (!databaseUrl || !directUrl) {
    // Each worker has a pool of 20: leave room for all of them and for scripts beside them.
    embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, log: (msg) => log.info(msg), maxConnections: Math.max(200, 20 * config.webConcurrency + 40) });
    databaseUrl = directUrl = embedded.url;
    if (!embedded.shared) log.info({ cluster: embedded.dataDir }, 'embedded PostgreSQL started');
  }
  try {
    await migrateDatabase(directUrl, databaseUrl);
  } catch (err) {
    await embedded?.stop();
    throw err;
  }

  // The replicas' lag, measured once for every worker (db/replicas.ts ReplicaMonitor), before any worker asks.
  const replicaFollowers = new Set<number>();
  const monitor = config.replicaUrls.length
    ? new ReplicaMonitor({
        primaryUrl: directUrl,
        replicas: config.replicaUrls.map((url, i) => ({ name: `replica-${i + 1}`, url })),
        maxLagMs: config.replicaMaxLagMs,
        applicationName: `blog-api:${process.pid}:probes`,
      })
    : undefined;
  if (monitor) {
    await monitor.check();
    monitor.start();
    // After every probe, so a replica a worker skipped after a failed read is back after the next good one.
    monitor.onChange((states) => {
      for (const id of replicaFollowers) {
        const w = cluster.workers?.[id];
        if (w?.isConnected()) w.send({ type: REPLICAS, states } satisfies ReplicasMessage);
      }
    });
  }

  // What every worker is told beyond the environment it inherits: the database the primary made.
  const workerEnv = { DATABASE_URL: databaseUrl, DATABASE_DIRECT_URL: directUrl, JWT_SECRET: jwtSecret };
  const aggregator = new AggregatorRegistry();
  let stopping = false;
  let starting = true;
  const deaths: number[] = [];
  /** The worker running the background jobs, and those that asked to (in the order they asked). */
  let jobsWorker: Worker | undefined;
  const jobsCandidates = new Map<number, Worker>();
  const chooseJobsWorker = () => {
    if (stopping || (jobsWorker && !jobsWorker.isDead())) return;
    jobsWorker = undefined;
    for (const [id, w] of jobsCandidates) {
      if (w.isDead() || !w.isConnected()) {
        jobsCandidates.delete(id);
        continue;
      }
      jobsWorker = w;
      w.send({ type: JOBS_RUN });
      log.info({ workerId: w.id }, `worker ${w.id} runs the background jobs`);
      return;
    }
  };

  const fork = (): Worker => {
    const worker = cluster.fork(workerEnv);
    // A message to a worker that is exiting fails after isConnected() said yes (EPIPE, a closed
    // channel); node:cluster re-emits that as 'error', which unhandled would end this process.
    worker.on('error', (err: NodeJS.ErrnoException) => {
      const closing = err.code === 'EPIPE' || err.code === 'ERR_IPC_CHANNEL_CLOSED' || err.code === 'ECONNRESET';
      if (closing) log.debug({ workerId: worker.id, err }, 'a message to an exiting worker was lost');
      else log.error({ workerId: worker.id, err }, 'the channel to a worker failed');
    });
    // The asker may have died meanwhile: a send on a closed channel would be an unhandled error here.
    const reply = (msg: MetricsReply | ReplicasMessage) => worker.isConnected() && worker.send(msg);
    worker.on('message', (msg: WorkerMessage) => {
      if (msg?.type === REPLICAS_REQUEST) {
        replicaFollowers.add(worker.id);
        if (monitor) reply({ type: REPLICAS, states: monitor.status() });
        return;
      }
      if (msg?.type === JOBS_REQUEST) {
        jobsCandidates.set(worker.id, worker);
        chooseJobsWorker();
        return;
      }
      if (msg?.type !== METRICS_REQUEST) return;
      aggregator.clusterMetrics().then(
        (text) => reply({ type: METRICS_REPLY, id: msg.id, text }),
        (err: Error) => {
          log.warn({ err }, 'could not collect the metrics of every worker');
          reply({ type: METRICS_REPLY, id: msg.id, error: err.message });
        },
      );
    });
    worker.once('exit', () => {
      replicaFollowers.delete(worker.id);
      jobsCandidates.delete(worker.id);
      if (jobsWorker === worker) chooseJobsWorker();
    });
    return worker;
  };

  // The shutdown, one step after another; a new resource adds its step where it belongs.
  let forgetUrl = () => undefined as void;
  const steps: { name: string; run: () => Promise<unknown> }[] = [
    { name: 'service url', run: async () => forgetUrl() },
    // The probes first: their states go to every worker, and the workers are about to exit.
    { name: 'replica probes', run: async () => monitor?.stop() },
    { name: 'workers', run: () => stopWorkers(config.shutdownTimeoutMs + 5_000, log) },
    { name: 'database', run: async () => embedded?.stop() },
  ];
  const shutdown = async (reason: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal: reason }, 'shutting down: every worker drains, then the database stops');
    for (const step of steps) {
      await step.run();
      log.debug(`${step.name} closed`);
    }
    log.info('stopped');
    process.exit(code);
  };

  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    if (starting) {
      // A worker that cannot start (port taken, bad database) would fail the same way again.
      log.error({ workerId: worker.id, code, signal }, 'a worker failed to start; stopping');
      void shutdown('worker failed to start', 1);
      return;
    }
    const now = Date.now();
    deaths.push(now);
    while (deaths.length && deaths[0] < now - CRASH_WINDOW_MS) deaths.shift();
    // The first death is replaced at once; repeated ones wait longer and longer (a crash loop
    // must not burn the CPU the surviving workers need).
    const delay = deaths.length <= 1 ? 0 : Math.min(MAX_BACKOFF_MS, 500 * 2 ** (deaths.length - 2));
    log.warn({ workerId: worker.id, pid: worker.process.pid, code, signal, restartInMs: delay }, `worker ${worker.id} exited (${signal ?? `code ${code}`}); starting a replacement`);
    setTimeout(() => {
      if (stopping) return;
      const next = fork();
      next.once('listening', () => log.info({ workerId: next.id, replaces: worker.id }, `worker ${next.id} replaced worker ${worker.id}`));
    }, delay).unref();
  });

  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  if (config.underNpm) watchParent(() => void shutdown('npm exited'));

  const listening = Array.from({ length: config.webConcurrency }, () => {
    const worker = fork();
    return new Promise<number>((resolve) => worker.once('listening', (address) => resolve(address.port)));
  });
  const [port] = await Promise.all(listening);
  starting = false;
  // The workers share one port (PORT=0: the one the system gave the first): the primary says it for all.
  if (!stopping) forgetUrl = announceServiceUrl(config.dataDir, `http://localhost:${port}`);
  log.info({ workers: config.webConcurrency }, `${config.webConcurrency} workers listening`);
}

/** Asks every worker to drain (the same SIGTERM path as a single process); kills those past the deadline. */
async function stopWorkers(deadlineMs: number, log: Logger): Promise<void> {
  const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && !w.isDead());
  await Promise.all(workers.map((w) => new Promise<void>((resolve) => {
    if (w.isDead()) return resolve();
    const forced = setTimeout(() => {
      log.warn({ workerId: w.id }, 'worker still running after the shutdown timeout; killing it');
      w.process.kill('SIGKILL');
    }, deadlineMs);
    w.once('exit', () => {
      clearTimeout(forced);
      resolve();
    });
    w.process.kill('SIGTERM');
  })));
}

/** In a worker: /metrics asks the primary, which collects every worker's registry (this one's included). */
export function clusterMetrics(registry: Registry): () => Promise<string> {
  AggregatorRegistry.setRegistries([registry]);
  new AggregatorRegistry(); // its constructor is what makes a worker answer the primary's requests
  let next = 0;
  const pending = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void }>();
  process.on('message', (msg: MetricsReply) => {
    if (msg?.type !== METRICS_REPLY) return;
    const waiter = pending.get(msg.id);
    pending.delete(msg.id);
    if (msg.text !== undefined) waiter?.resolve(msg.text);
    else waiter?.reject(AppError.unavailable()); // a worker did not answer in time (one just died): ask again
  });
  return () => new Promise<string>((resolve, reject) => {
    const id = ++next;
    pending.set(id, { resolve, reject });
    process.send!({ type: METRICS_REQUEST, id } satisfies MetricsRequest);
  });
}

/**
 * In a worker: the replicas' states come from the primary process, which measures them for all
 * workers (runPrimary); resolves once the first has arrived (or after a few seconds without:
 * meanwhile reads go to the primary).
 */
export async function followReplicas(routing: ReadRouting | undefined): Promise<void> {
  if (!routing?.replicas.length) return;
  process.on('message', (msg: ReplicasMessage) => {
    if (msg?.type === REPLICAS) routing.apply(msg.states);
  });
  process.send!({ type: REPLICAS_REQUEST });
  await routing.ready();
}

/**
 * In a worker: offers to run the background jobs; `start` runs when the primary chooses this
 * worker (the first to offer, or, when the one running them dies, the next).
 */
export function jobsWhenChosen(start: () => void): void {
  process.on('message', (msg: { type?: string }) => {
    if (msg?.type === JOBS_RUN) start();
  });
  process.send!({ type: JOBS_REQUEST });
}

/**
 * Under `npm start` our life is npm's: npm forwards SIGTERM/SIGINT to us, but if npm itself is
 * killed hard nothing tells us, and we would run on, orphaned. Re-parenting is the only sure
 * sign (stdin is the terminal's, or /dev/null, and stays open), so the parent pid is polled.
 * Started by hand (`node dist/src/main.js &`, nohup) a vanished shell is no reason to stop.
 * Workers need none of it: node:cluster ends a worker whose primary is gone.
 */
export function watchParent(onGone: () => void): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer);
      onGone();
    }
  }, 1000);
  timer.unref();
}
