import autocannon from 'autocannon';
import { benchConfig } from './config';
import { call } from './http';
import { peakRssMb, rssMb, waitIdle, type Target } from './processes';
import { addComment, createPost, firstPage, graphqlPosts, listPosts, register, showPost, tokenOf, type Req } from './scenarios';

/**
 * The soak (`--only soak`, issue 48): does the service give memory back once a long load of mixed
 * reads and writes is over? A service of its own, started fresh as the bench starts the service
 * (production, SMTP down: every registration's mail is queued and retried, never sent), answers
 * one request, then takes `--soak-seconds` of the mix below at `--connections`; afterwards its
 * RSS is polled until it stops moving. Figures: requests, errors, RSS at the start, peak and
 * settled, and how long it took to settle.
 */
export interface SoakFigures {
  /** The load's length as the load generator measured it. */
  seconds: number;
  connections: number;
  requests: number;
  /** Socket errors, timeouts and non-2xx answers: every request of the mix expects a 2xx. */
  errors: number;
  statusCodes: Record<string, number>;
  /** RSS after the start and one answered request, before the load. */
  startRssMb: number;
  /** The highest RSS since the start (VmHWM) when the load stops: the load's peak. */
  peakRssMb: number;
  /** RSS the moment the load stops. */
  endRssMb: number;
  /** RSS once it stopped moving (or after SETTLE_MAX_MS), and when that was, in seconds after the load. */
  settledRssMb: number;
  settledAfterSeconds: number;
  /** False when RSS still moved when polling gave up. */
  settled: boolean;
}

/**
 * Polling after the load: one sample a second; settled once SETTLE_WINDOW samples lie within
 * SETTLE_MB, no sooner than SETTLE_MIN_MS, or after SETTLE_MAX_MS. The service gives its memory
 * back once it has been idle for MEMORY_RELEASE_IDLE_MS (60 s by default, src/core/heap.ts): a
 * plateau before that is not taken for the end.
 */
const SETTLE_WINDOW = 15;
const SETTLE_MB = 1;
const SETTLE_MIN_MS = 75_000;
const SETTLE_MAX_MS = 120_000;

/**
 * 80% reads (30% REST list pages, 25% post details, 25% the GraphQL page, pages at random),
 * 20% writes (12% comments, 7.5% posts, 0.5% registrations, each a bcrypt hash at cost 12 and a
 * queued mail): registrations stay rare so that hashing does not decide the soak's throughput.
 * Writes carry tokens of seeded users signed here, so no login comes before the start figure.
 */
function soakMix(): () => Req {
  const tokens = Array.from({ length: 20 }, (_, i) => tokenOf(i + 3));
  return () => {
    const r = Math.random();
    const token = tokens[Math.floor(Math.random() * tokens.length)];
    if (r < 0.3) return listPosts();
    if (r < 0.55) return showPost();
    if (r < 0.8) return graphqlPosts();
    if (r < 0.92) return addComment(token);
    if (r < 0.995) return createPost(token);
    return register();
  };
}

/** Samples RSS once a second after the load until SETTLE_WINDOW samples in a row lie within SETTLE_MB. */
async function settle(pid: number): Promise<Pick<SoakFigures, 'settledRssMb' | 'settledAfterSeconds' | 'settled'>> {
  const started = Date.now();
  const samples: { at: number; mb: number }[] = [];
  for (;;) {
    samples.push({ at: (Date.now() - started) / 1000, mb: rssMb(pid) });
    const window = samples.slice(-SETTLE_WINDOW);
    const mbs = window.map((s) => s.mb);
    if (Date.now() - started >= SETTLE_MIN_MS && window.length === SETTLE_WINDOW && Math.max(...mbs) - Math.min(...mbs) < SETTLE_MB) {
      return { settledRssMb: mbs[mbs.length - 1], settledAfterSeconds: window[0].at, settled: true };
    }
    if (Date.now() - started >= SETTLE_MAX_MS) return { settledRssMb: mbs[mbs.length - 1], settledAfterSeconds: samples[samples.length - 1].at, settled: false };
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** Runs the soak on a service `start` starts (and stops it after). */
export async function runSoak(start: () => Promise<Target>, log: (msg: string) => void): Promise<SoakFigures> {
  const t = await start();
  try {
    const first = firstPage();
    const answer = await call(t.url, first.method, first.path);
    if (answer.status !== 200) throw new Error(`soak: ${first.path} → ${answer.status}`);
    await waitIdle([t.pid]);
    const startRssMb = rssMb(t.pid);
    log(`soak: ${benchConfig.soakSeconds} s of 80% reads / 20% writes at ${benchConfig.connections} connections; RSS at the start ${startRssMb.toFixed(0)} MB`);
    const next = soakMix();
    // A line every 30 s: a three-minute load should show it is alive.
    const began = Date.now();
    const progress = setInterval(() => log(`soak: ${Math.round((Date.now() - began) / 1000)} s, RSS ${rssMb(t.pid).toFixed(0)} MB, peak ${peakRssMb(t.pid).toFixed(0)} MB`), 30_000);
    let r: autocannon.Result;
    try {
      r = await autocannon({
        url: t.url,
        connections: benchConfig.connections,
        duration: benchConfig.soakSeconds,
        timeout: 30,
        requests: [{ setupRequest: (req) => ({ ...req, ...next() }) }],
      });
    } finally {
      clearInterval(progress);
    }
    const [endRssMb, peak] = [rssMb(t.pid), peakRssMb(t.pid)];
    const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([code, { count }]) => [code, Number(count)]));
    const requests = Object.values(statusCodes).reduce((a, n) => a + n, 0);
    log(`soak: ${requests} answers in ${r.duration.toFixed(0)} s, ${r.errors} socket errors or timeouts, ${r.non2xx} non-2xx; RSS peak ${peak.toFixed(0)} MB, ${endRssMb.toFixed(0)} MB when the load stopped`);
    const settled = await settle(t.pid);
    log(`soak: RSS ${settled.settled ? 'settled' : 'still moving'} at ${settled.settledRssMb.toFixed(0)} MB after ${settled.settledAfterSeconds.toFixed(0)} s`);
    return { seconds: r.duration, connections: benchConfig.connections, requests, errors: r.errors + r.non2xx, statusCodes, startRssMb, peakRssMb: peak, endRssMb, ...settled };
  } finally {
    if (t.exited()) log(`soak: the service exited (${t.exited()}); its last output:\n${t.output()}`);
    await t.stop();
  }
}
