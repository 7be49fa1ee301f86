import autocannon from 'autocannon';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { BENCH_PASSWORD, PER_PAGE, TRASH_EVERY, benchConfig, metricsHeaders, userEmail } from './config';
import { call } from './http';
import { cpuTicks, rssMb, TICK_MS, waitIdle, type Target } from './processes';

/**
 * The realtime scenario (issue 16): N idle subscribers to `commentAdded` on one post, each on a
 * connection of its own, plus 100 on other posts; a stream of comments added through REST.
 * Figures: subscribers held, delivery latency from the write's answer to the last subscriber's
 * delivery (p50/p99), RSS per idle subscriber (and on a bare graphql-ws server, the comparator),
 * and GET /posts throughput alone vs. with them.
 */
export interface RealtimeFigures {
  subscribers: number;
  held: number;
  p50: number;
  p99: number;
  rssPerSubscriberKb: number;
  /** The same on the bare graphql-ws server (bench/reference/graphql-ws.ts); NaN when it was not measured. */
  bareRssPerSubscriberKb: number;
  listRpsAlone: number;
  listRpsWith: number;
  /** The service's CPU time per comment (all deliveries included), ms. */
  serverCpuMsPerEvent: number;
  /** The same for this process (the load generator holding every client), ms. */
  clientCpuMsPerEvent: number;
}

const COMMENTS = Number(process.env.BENCH_REALTIME_COMMENTS ?? 40);
const SUBSCRIPTION = 'subscription($id: Int!) { commentAdded(postId: $id) { id body user { id name } } }';
/** The bare server's one subscription: the same field and argument, an Int for a payload. */
const BARE_SUBSCRIPTION = 'subscription($id: Int!) { commentAdded(postId: $id) }';
const livePostIds = (n: number) => Array.from({ length: n * 2 }, (_, i) => i + 2).filter((id) => id % TRASH_EVERY !== 0).slice(0, n);

async function activeSubscriptions(url: string): Promise<number> {
  const text = String((await call(url, 'GET', '/metrics', { headers: metricsHeaders })).body);
  let n = 0;
  for (const m of text.matchAll(/^graphql_subscriptions_active\{[^}]*\} (\d+)/gm)) n += Number(m[1]);
  return n;
}

async function until(what: string, cond: () => Promise<boolean> | boolean, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`realtime: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function listRps(url: string): Promise<number> {
  const lastPage = Math.max(1, Math.ceil((benchConfig.posts * 0.95) / PER_PAGE));
  const r = await autocannon({
    url,
    connections: benchConfig.connections,
    duration: Math.max(3, Math.min(benchConfig.duration, 10)),
    requests: [{ setupRequest: (req) => ({ ...req, method: 'GET', path: `/posts?page=${1 + Math.floor(Math.random() * lastPage)}` }) }],
  });
  return r.requests.total / r.duration;
}

const percentile = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN);

/** BENCH_REALTIME_COUNTS=1000,5000 (default): the subscriber counts measured. */
const COUNTS = (process.env.BENCH_REALTIME_COUNTS ?? '1000,5000').split(',').map(Number).filter((n) => n > 0);

/** Subscriptions held open, each on a connection of its own, and what they cost the server. */
interface Held {
  clients: Client[];
  /** Subscriptions the server refused or dropped, with the first reason seen. */
  failed: { count: number; first: string };
  /** Subscriptions the server counts once every one was opened. */
  held: number;
  /** The server's RSS growth over them, per subscription. */
  kbEach: number;
}

/**
 * Opens one subscription to `query` per id in `ids`, each on a WebSocket of its own, in steps of
 * 250 (so the connect burst does not look like the workload), waits until the server counts them
 * all (`active`) and is idle again, and reads what its RSS grew by. `onNext` sees every delivery.
 */
async function holdSubscribers(
  target: Target,
  query: string,
  ids: number[],
  active: () => Promise<number>,
  onNext: (id: number, data: Record<string, any>) => void = () => undefined,
): Promise<Held> {
  const wsUrl = `${target.url.replace(/^http/, 'ws')}/graphql`;
  await waitIdle([target.pid]);
  const rssBefore = rssMb(target.pid);
  const clients: Client[] = [];
  const failed = { count: 0, first: '' };
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
    clients.push(client);
    client.subscribe<Record<string, any>>(
      { query, variables: { id } },
      {
        next: ({ data }) => data && onNext(id, data),
        error: (err) => {
          failed.count++;
          const e = err as { code?: number; reason?: string; message?: string };
          failed.first ||= e.code ? `close ${e.code} ${e.reason ?? ''}` : String(e.message ?? JSON.stringify(err)).slice(0, 200);
        },
        complete: () => undefined,
      },
    );
    if (i % 250 === 249) await until(`${i + 1} subscribers`, async () => (await active()) + failed.count >= i + 1);
  }
  await until(`${ids.length} subscribers`, async () => (await active()) + failed.count >= ids.length);
  await waitIdle([target.pid]);
  const held = await active();
  return { clients, failed, held, kbEach: ((rssMb(target.pid) - rssBefore) * 1024) / ids.length };
}

async function release(h: Held, active: () => Promise<number>): Promise<void> {
  await Promise.all(h.clients.map(async (c) => c.dispose()));
  await until('subscribers gone', async () => (await active()) === 0);
}

/** The bare graphql-ws server's (bench/reference/graphql-ws.ts) count of live subscriptions. */
const bareSubscriptions = async (url: string) => Number((await call(url, 'GET', '/subscriptions')).body);

/**
 * The scenario against the service; with `bare` (the bare graphql-ws server), the same idle
 * subscribers there too, after the service's are gone: the comparator of RSS per idle subscriber.
 */
export async function runRealtime(target: Target, log: (msg: string) => void, bare?: Target, counts = COUNTS): Promise<RealtimeFigures[]> {
  const login = await call(target.url, 'POST', '/auth/login', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: userEmail(1), password: BENCH_PASSWORD }) });
  const token = login.body?.token as string;
  if (!token) throw new Error(`realtime: login failed (${login.status})`);
  const [postId, ...others] = livePostIds(101);
  const active = () => activeSubscriptions(target.url);
  // The first run warms the JIT and the caches; the second is the baseline.
  await listRps(target.url);
  await waitIdle([target.pid]);
  const listRpsAlone = await listRps(target.url);
  const out: RealtimeFigures[] = [];
  const idsFor = (n: number) => [...Array.from({ length: n }, () => postId), ...others];
  const bareActive = bare && (() => bareSubscriptions(bare.url));
  if (bare && bareActive) {
    // Both measured warm: the service has served the GET /posts runs above; the bare server first
    // opens and closes the most subscribers measured once, else its figure would carry the growth
    // of a young generation that the first burst of connections sizes (twice the service's here).
    await release(await holdSubscribers(bare, BARE_SUBSCRIPTION, idsFor(Math.max(...counts)), bareActive), bareActive);
  }

  for (const n of counts) {
    const ids = idsFor(n);
    /** Per comment id: deliveries to subscribers of the measured post, and when the last came. */
    const seen = new Map<number, { count: number; last: number }>();
    const h = await holdSubscribers(target, SUBSCRIPTION, ids, active, (id, data) => {
      if (id !== postId) return;
      const s = seen.get(data.commentAdded.id) ?? { count: 0, last: 0 };
      s.count++;
      s.last = performance.now();
      seen.set(data.commentAdded.id, s);
    });
    if (h.failed.count) log(`realtime ${n}: ${h.failed.count} subscriptions failed (first: ${h.failed.first})`);
    log(`realtime ${n}: ${h.held} subscriptions held, ${h.kbEach.toFixed(1)} KB RSS each`);

    const latencies: number[] = [];
    const [serverTicks, clientCpu] = [cpuTicks(target.pid), process.cpuUsage()];
    for (let c = 0; c < COMMENTS; c++) {
      const res = await call(target.url, 'POST', `/posts/${postId}/comments`, {
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ body: `live ${n}-${c}` }),
      });
      const answered = performance.now();
      if (res.status !== 201) throw new Error(`realtime: comment → ${res.status}`);
      const id = res.body.id as number;
      // Every measured subscriber still subscribed (a failure after the start is counted, not waited for).
      await until(`comment ${id} to reach ${n - h.failed.count} subscribers`, () => (seen.get(id)?.count ?? 0) >= n - h.failed.count, 30_000);
      latencies.push(Math.max(0, seen.get(id)!.last - answered));
      await new Promise((r) => setTimeout(r, 100));
    }
    const serverCpuMsPerEvent = ((cpuTicks(target.pid) - serverTicks) * TICK_MS) / COMMENTS;
    const used = process.cpuUsage(clientCpu);
    const clientCpuMsPerEvent = (used.user + used.system) / 1000 / COMMENTS;
    latencies.sort((a, b) => a - b);
    const listRpsWith = await listRps(target.url);
    log(`realtime ${n}: delivery to all p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms; CPU per comment: service ${serverCpuMsPerEvent.toFixed(0)} ms, load generator ${clientCpuMsPerEvent.toFixed(0)} ms; GET /posts ${listRpsAlone.toFixed(0)} → ${listRpsWith.toFixed(0)} req/s`);
    await release(h, active);

    // The same subscribers on the bare server, once the service's are closed (this process holds one set at a time).
    let bareRssPerSubscriberKb = NaN;
    if (bare && bareActive) {
      const b = await holdSubscribers(bare, BARE_SUBSCRIPTION, ids, bareActive);
      if (b.failed.count) log(`realtime ${n}: ${b.failed.count} subscriptions to the bare graphql-ws server failed (first: ${b.failed.first})`);
      bareRssPerSubscriberKb = b.kbEach;
      log(`realtime ${n}: bare graphql-ws server: ${b.held} subscriptions held, ${b.kbEach.toFixed(1)} KB RSS each`);
      await release(b, bareActive);
    }
    out.push({
      subscribers: n, held: h.held, p50: percentile(latencies, 50), p99: percentile(latencies, 99), rssPerSubscriberKb: h.kbEach, bareRssPerSubscriberKb,
      listRpsAlone, listRpsWith, serverCpuMsPerEvent, clientCpuMsPerEvent,
    });
  }
  return out;
}
