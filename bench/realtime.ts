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
 * delivery (p50/p99), RSS per idle subscriber, and GET /posts throughput alone vs. with them.
 */
export interface RealtimeFigures {
  subscribers: number;
  held: number;
  p50: number;
  p99: number;
  rssPerSubscriberKb: number;
  listRpsAlone: number;
  listRpsWith: number;
  /** The service's CPU time per comment (all deliveries included), ms. */
  serverCpuMsPerEvent: number;
  /** The same for this process (the load generator holding every client), ms. */
  clientCpuMsPerEvent: number;
}

const COMMENTS = Number(process.env.BENCH_REALTIME_COMMENTS ?? 40);
const SUBSCRIPTION = 'subscription($id: Int!) { commentAdded(postId: $id) { id body user { id name } } }';
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

export async function runRealtime(target: Target, log: (msg: string) => void, counts = COUNTS): Promise<RealtimeFigures[]> {
  const login = await call(target.url, 'POST', '/auth/login', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: userEmail(1), password: BENCH_PASSWORD }) });
  const token = login.body?.token as string;
  if (!token) throw new Error(`realtime: login failed (${login.status})`);
  const [postId, ...others] = livePostIds(101);
  const wsUrl = `${target.url.replace(/^http/, 'ws')}/graphql`;
  // The first run warms the JIT and the caches; the second is the baseline.
  await listRps(target.url);
  await waitIdle([target.pid]);
  const listRpsAlone = await listRps(target.url);
  const out: RealtimeFigures[] = [];

  for (const n of counts) {
    await waitIdle([target.pid]);
    const rssBefore = rssMb(target.pid);
    const clients: Client[] = [];
    /** Per comment id: deliveries to subscribers of the measured post, and when the last came. */
    const seen = new Map<number, { count: number; last: number }>();
    /** Subscriptions the server refused or dropped, with the first reason seen. */
    const failed = { count: 0, first: '' };
    const open = (id: number, measured: boolean) => {
      const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
      clients.push(client);
      client.subscribe<{ commentAdded: { id: number } }>(
        { query: SUBSCRIPTION, variables: { id } },
        {
          next: ({ data }) => {
            if (!measured || !data) return;
            const s = seen.get(data.commentAdded.id) ?? { count: 0, last: 0 };
            s.count++;
            s.last = performance.now();
            seen.set(data.commentAdded.id, s);
          },
          error: (err) => {
            failed.count++;
            const e = err as { code?: number; reason?: string; message?: string };
            failed.first ||= e.code ? `close ${e.code} ${e.reason ?? ''}` : String(e.message ?? JSON.stringify(err)).slice(0, 200);
          },
          complete: () => undefined,
        },
      );
    };
    const total = n + others.length;
    // In steps, so the connect burst does not look like the workload.
    for (let i = 0; i < n; i++) {
      open(postId, true);
      if (i % 250 === 249) await until(`${i + 1} subscribers`, async () => (await activeSubscriptions(target.url)) + failed.count >= i + 1);
    }
    for (const id of others) open(id, false);
    await until(`${total} subscribers`, async () => (await activeSubscriptions(target.url)) + failed.count >= total);
    if (failed.count) log(`realtime ${n}: ${failed.count} subscriptions failed (first: ${failed.first})`);
    await waitIdle([target.pid]);
    const held = await activeSubscriptions(target.url);
    const rssPerSubscriberKb = ((rssMb(target.pid) - rssBefore) * 1024) / total;
    log(`realtime ${n}: ${held} subscriptions held, ${rssPerSubscriberKb.toFixed(1)} KB RSS each`);

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
      await until(`comment ${id} to reach ${n - failed.count} subscribers`, () => (seen.get(id)?.count ?? 0) >= n - failed.count, 30_000);
      latencies.push(Math.max(0, seen.get(id)!.last - answered));
      await new Promise((r) => setTimeout(r, 100));
    }
    const serverCpuMsPerEvent = ((cpuTicks(target.pid) - serverTicks) * TICK_MS) / COMMENTS;
    const used = process.cpuUsage(clientCpu);
    const clientCpuMsPerEvent = (used.user + used.system) / 1000 / COMMENTS;
    latencies.sort((a, b) => a - b);
    const listRpsWith = await listRps(target.url);
    out.push({ subscribers: n, held, p50: percentile(latencies, 50), p99: percentile(latencies, 99), rssPerSubscriberKb, listRpsAlone, listRpsWith, serverCpuMsPerEvent, clientCpuMsPerEvent });
    log(`realtime ${n}: delivery to all p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms; CPU per comment: service ${serverCpuMsPerEvent.toFixed(0)} ms, load generator ${clientCpuMsPerEvent.toFixed(0)} ms; GET /posts ${listRpsAlone.toFixed(0)} → ${listRpsWith.toFixed(0)} req/s`);

    await Promise.all(clients.map(async (c) => c.dispose()));
    await until('subscribers gone', async () => (await activeSubscriptions(target.url)) === 0);
  }
  return out;
}
