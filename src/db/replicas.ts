import { Pool } from 'pg';
import type { EntityManager, MikroORM, AbstractSqlConnection } from '@mikro-orm/postgresql';
import { isConnectionError } from '../core/errors';
import { PRIMARY, StatementLog, type ReadTarget } from './statement-log';

/**
 * Which pool a read goes to: the primary, or a replica that is up and caught up.
 *
 * MikroORM holds the replicas (its `replicas` option, mikro-orm.config.ts) and hands out a 'read'
 * connection, one of them at random, through `em.getConnection('read')`. This module only decides
 * whether to take it:
 * - Only a read that says it may be stale asks for one: `readStale(em, run)`, called by the hot
 *   statements (db/statements.ts) when the request's context says so (`ctx.readFrom = 'read'`:
 *   anonymous post lists and details). MikroORM's own reads stay on the primary
 *   (`preferReadReplicas: false`), so every other read, every write and all work outside a
 *   request (jobs) use the primary.
 * - Only a replica in use, as ReplicaMonitor last found it: measured in this process, or, in a
 *   cluster's worker, by the cluster's primary process and told to every worker (src/cluster.ts),
 *   so the probes cost the database the same whatever WEB_CONCURRENCY is.
 * - A read that fails on a replica because of the connection (or a recovery conflict) is run
 *   again on the primary, and that replica is skipped until its next good probe.
 */
type SkipReason = 'down' | 'lagging' | 'not a standby' | 'not checked yet';

export interface ReplicaState {
  name: string;
  inUse: boolean;
  /** Last measured lag; null when unknown (down, never checked). */
  lagMs: number | null;
  reason: SkipReason | null;
}

interface Replica extends ReplicaState {
  target: ReadTarget;
  /** What MikroORM's connection to it reports as host and port, to know it when handed out. */
  address: string;
  /** MikroORM's connection to it, once `getConnection('read')` has handed it out. */
  conn?: AbstractSqlConnection;
}

const HISTORY_MS = 60_000;
/** How often the primary itself is asked for its WAL position (one transaction each). */
const PRIMARY_POLL_MS = 1000;

const lsn = (text: string): bigint => {
  const [hi, lo] = text.split('/');
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
};

/** Host and port as MikroORM's Connection.getConnectionOptions() reads them from a client URL. */
const addressOf = (host: string | undefined, port: number | undefined) => `${host ?? ''}:${port ?? 0}`;

/** `p`, or a rejection after `ms` (the probes', the pool gauge's and /readyz's bound). */
export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]);
}

/**
 * Errors after which the same read on the primary will do: the replica is gone, or cancelled it
 * (recovery conflict). A standby reports a recovery conflict as 40001 (serialization_failure),
 * or 57P04 when the database was dropped; a standby runs no serializable transactions, so there
 * 40001 means nothing else.
 */
function retryOnPrimary(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return isConnectionError(err) || code === '40001';
}

/** A replica's probe interval for a lag bound: a quarter of it, 100 ms to 1 s. */
const replicaPollMs = (maxLagMs: number) => Math.min(1000, Math.max(100, Math.round(maxLagMs / 4)));

interface Probed {
  name: string;
  probes: Pool;
  probing: boolean;
  state: ReplicaState;
}

/**
 * Measures the replicas' lag: once per instance (the single process, or a cluster's primary
 * process for all its workers), over pg connections of its own (so probes neither queue behind
 * requests nor count as their statements).
 *
 * Lag: a standby's `pg_last_xact_replay_timestamp()` ages on an idle primary although nothing
 * is missing, so it is not the lag. The monitor keeps a timeline of WAL positions known to
 * exist, each with the time it was first seen: the primary's `pg_current_wal_lsn()`, asked once a
 * second (PRIMARY_POLL_MS: a transaction on the primary each time, so not more often), and
 * every standby's `pg_last_wal_receive_lsn()`, asked at every probe (`pollMs`, a quarter of the
 * allowed lag, 100 ms to 1 s: free for the primary). What a standby has received, the primary
 * had written. A replica that has replayed up to the latest known position is 0 ms behind;
 * otherwise it is behind since the first time a position past its replay was seen. Replay lag
 * (a standby that receives but applies slowly, or is paused) is thus seen at the probe interval;
 * a stream that stalls between primary and standby at the primary's (1 s).
 */
export class ReplicaMonitor {
  readonly pollMs: number;
  private readonly maxLagMs: number;
  private readonly replicas: Probed[];
  private readonly primary: Pool;
  private readonly samples: { at: number; lsn: bigint }[] = [];
  private readonly listeners: ((states: ReplicaState[]) => void)[] = [];
  private lastPrimaryPoll = -Infinity;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;

  constructor(o: { primaryUrl: string; replicas: { name: string; url: string }[]; maxLagMs: number; applicationName?: string; pollMs?: number }) {
    this.pollMs = o.pollMs ?? replicaPollMs(o.maxLagMs);
    this.maxLagMs = o.maxLagMs;
    const timeout = Math.max(500, this.pollMs);
    const pool = (url: string) => {
      // One connection: a probe at a time (a hung server's probe is not piled on, see probe()).
      const p = new Pool({ connectionString: url, max: 1, connectionTimeoutMillis: timeout, allowExitOnIdle: true, application_name: o.applicationName });
      p.on('error', () => undefined); // an idle probe connection cut by a server going away; the next probe says 'down'
      return p;
    };
    this.primary = pool(o.primaryUrl);
    this.replicas = o.replicas.map(({ name, url }) => ({ name, probes: pool(url), probing: false, state: { name, inUse: false, lagMs: null, reason: 'not checked yet' } }));
  }

  status(): ReplicaState[] {
    return this.replicas.map((r) => ({ ...r.state }));
  }

  /** Called with every replica's state after each check. */
  onChange(listener: (states: ReplicaState[]) => void): void {
    this.listeners.push(listener);
  }

  /** One check (never two at once): the primary's WAL position when due, then every replica's. */
  check(): Promise<void> {
    return (this.checking ??= this.run().finally(() => (this.checking = undefined)));
  }

  private async run(): Promise<void> {
    if (!this.replicas.length) return;
    const timeout = Math.max(500, this.pollMs);
    const now = Date.now();
    // A little early still counts as due: timers drift, and a skipped second doubles the resolution.
    if (now - this.lastPrimaryPoll >= PRIMARY_POLL_MS - this.pollMs / 2) {
      this.lastPrimaryPoll = now;
      try {
        const { rows } = await withTimeout(this.primary.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn'), timeout);
        this.sample(now, lsn(rows[0].lsn));
      } catch {
        // The primary is unreachable: the standbys' received positions still bound the lag, and the requests fail on their own.
      }
    }
    const probed = await Promise.all(this.replicas.map((r) => this.probe(r, timeout)));
    for (let i = 0; i < this.replicas.length; i++) {
      const r = this.replicas[i];
      const p = probed[i];
      if (p === 'busy') continue;
      if (p === 'down' || p === 'not a standby') r.state = { name: r.name, inUse: false, lagMs: p === 'down' ? null : r.state.lagMs, reason: p };
      else {
        const lagMs = this.lagOf(p.replay, p.replayAgeMs);
        r.state = { name: r.name, inUse: lagMs <= this.maxLagMs, lagMs, reason: lagMs <= this.maxLagMs ? null : 'lagging' };
      }
    }
    const states = this.status();
    for (const l of this.listeners) l(states);
  }

  /** A WAL position known to exist at `at`; the timeline keeps only increases, each with when it was first seen. */
  private sample(at: number, position: bigint): void {
    const last = this.samples[this.samples.length - 1];
    if (last && position <= last.lsn) return;
    this.samples.push({ at, lsn: position });
    while (this.samples.length > 2 && this.samples[1].at < at - HISTORY_MS) this.samples.shift();
  }

  private async probe(r: Probed, timeout: number): Promise<'busy' | 'down' | 'not a standby' | { replay: bigint; replayAgeMs: number | null }> {
    if (r.probing) return 'busy'; // a hung replica: its last probe is still waiting
    r.probing = true;
    const query = r.probes.query<{ standby: boolean; replay: string | null; received: string | null; replay_age_ms: string | number | null }>(
      `select pg_is_in_recovery() as standby, pg_last_wal_replay_lsn()::text as replay, pg_last_wal_receive_lsn()::text as received,
              extract(epoch from now() - pg_last_xact_replay_timestamp()) * 1000 as replay_age_ms`,
    );
    query.then(() => (r.probing = false), () => (r.probing = false));
    try {
      const [row] = (await withTimeout(query, timeout)).rows;
      if (!row.standby || !row.replay) return 'not a standby';
      if (row.received) this.sample(Date.now(), lsn(row.received));
      return { replay: lsn(row.replay), replayAgeMs: row.replay_age_ms === null ? null : Number(row.replay_age_ms) };
    } catch {
      return 'down';
    }
  }

  private lagOf(replay: bigint, replayAgeMs: number | null): number {
    const latest = this.samples[this.samples.length - 1];
    if (!latest || replay >= latest.lsn) return 0;
    const i = this.samples.findIndex((s) => s.lsn > replay);
    const since = Date.now() - this.samples[i].at;
    // Behind since before our first sample: at most as old as its last replayed commit.
    return i === 0 ? Math.max(since, replayAgeMs ?? Number.POSITIVE_INFINITY) : since;
  }

  start(): void {
    if (!this.replicas.length || this.timer) return;
    this.timer = setInterval(() => void this.check(), this.pollMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.checking?.catch(() => undefined);
    await Promise.all([this.primary, ...this.replicas.map((r) => r.probes)].map((p) => p.end().catch(() => undefined)));
  }
}

/**
 * Where the replicas' states come from: measured here ('measure': a ReplicaMonitor of this
 * process), or told by someone who measures them for several processes ('told': a cluster's
 * worker, src/cluster.ts, which calls `apply` with what its primary process measured).
 */
export type ReplicaStatusSource = 'measure' | 'told';

export class ReadRouting {
  readonly replicas: Replica[];
  private readonly listeners: ((pool: string) => void)[] = [];
  private readonly monitor: ReplicaMonitor | undefined;
  private told: (() => void) | undefined;

  constructor(
    orm: MikroORM,
    replicas: { name: string; url: string }[],
    readonly maxLagMs: number,
    source: ReplicaStatusSource = 'measure',
    applicationName?: string,
    primaryUrl: string = orm.config.get('clientUrl'),
  ) {
    this.replicas = replicas.map(({ name, url }) => {
      const u = new URL(url);
      return { name, target: { type: 'read', name }, address: addressOf(decodeURIComponent(u.hostname), +u.port), inUse: false, lagMs: null, reason: 'not checked yet' };
    });
    if (replicas.length && source === 'measure') {
      // Its own application_name: the probes are not this ORM's pooled connections (db_pool_connections).
      this.monitor = new ReplicaMonitor({ primaryUrl, replicas, maxLagMs, applicationName: applicationName && `${applicationName}:probes` });
      this.monitor.onChange((states) => this.apply(states));
    }
    const log = orm.config.getLogger();
    if (!(log instanceof StatementLog)) throw new Error('the ORM must log through StatementLog (mikro-orm.config.ts loggerFactory) for its statements to be counted');
    log.onStatement((pool) => this.emit(pool));
  }

  /**
   * Runs a read that may be stale on the replica MikroORM's read connection picked, or on the
   * primary when that replica is not in use; a read that fails on a replica because of its
   * connection (or a recovery conflict) skips that replica until its next good probe and runs
   * again on the primary, so the caller sees no error. `run` gets the connection to use.
   */
  async read<T>(em: EntityManager, run: (conn: AbstractSqlConnection, target: ReadTarget) => Promise<T>): Promise<T> {
    const replica = this.replicaOf(em.getConnection('read'));
    if (!replica?.inUse) return run(em.getConnection('write'), PRIMARY);
    try {
      return await run(replica.conn!, replica.target);
    } catch (err) {
      if (!retryOnPrimary(err)) throw err;
      replica.inUse = false;
      replica.reason = 'down';
      replica.lagMs = null;
      return run(em.getConnection('write'), PRIMARY);
    }
  }

  /** Which configured replica a connection MikroORM handed out is: the first with its address not yet matched. */
  private replicaOf(conn: AbstractSqlConnection): Replica | undefined {
    for (const r of this.replicas) if (r.conn === conn) return r;
    const { host, port } = conn.getConnectionOptions();
    const r = this.replicas.find((x) => !x.conn && x.address === addressOf(host, port));
    if (r) r.conn = conn;
    return r;
  }

  status(): ReplicaState[] {
    return this.replicas.map(({ name, inUse, lagMs, reason }) => ({ name, inUse, lagMs, reason }));
  }

  /** The replicas' states after a probe (every probe, so a replica this process skipped after a failed read is back after the next good one). */
  apply(states: readonly ReplicaState[]): void {
    for (const s of states) {
      const r = this.replicas.find((x) => x.name === s.name);
      if (r) Object.assign(r, { inUse: s.inUse, lagMs: s.lagMs, reason: s.reason });
    }
    this.told?.();
  }

  /**
   * Called with the pool's name for every statement sent to it: 'primary' (all of them, jobs
   * included) or 'replica-N' (the requests' reads; the health probes are not counted).
   */
  onQuery(listener: (pool: string) => void): void {
    this.listeners.push(listener);
  }

  private emit(pool: string): void {
    for (const l of this.listeners) l(pool);
  }

  /**
   * The first states: measured now ('measure'), or the first `apply` ('told'), waited for up to
   * `timeoutMs` (meanwhile every replica is 'not checked yet' and reads go to the primary).
   */
  async ready(timeoutMs = 5_000): Promise<void> {
    if (!this.replicas.length) return;
    if (this.monitor) return this.monitor.check();
    if (this.replicas.some((r) => r.reason !== 'not checked yet')) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      timer.unref();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.told = () => {
        this.told = undefined;
        done();
      };
    });
  }

  start(): void {
    this.monitor?.start();
  }

  async stop(): Promise<void> {
    this.told?.();
    await this.monitor?.stop();
  }
}

const routings = new WeakMap<MikroORM, ReadRouting>();
const routingsByDriver = new WeakMap<object, ReadRouting>();

/**
 * A read that may be slightly stale, through `em`'s ORM: on the replica its read connection
 * picked when that one is in use, else the primary (ReadRouting.read). Without replicas, or
 * inside a transaction, always the primary.
 */
export function readStale<T>(em: EntityManager, run: (conn: AbstractSqlConnection, target: ReadTarget) => Promise<T>): Promise<T> {
  const routing = routingsByDriver.get(em.getDriver());
  if (!routing?.replicas.length || em.getTransactionContext()) return run(em.getConnection('write'), PRIMARY);
  return routing.read(em, run);
}

/** The routing installed on `orm` by installReadRouting (db/orm.ts does it for every ORM with replicas). */
export function readRoutingOf(orm: MikroORM): ReadRouting | undefined {
  return routings.get(orm);
}

/**
 * Counts `orm`'s statements per pool and follows the replicas MikroORM was configured with
 * (`replicas`: name and clientUrl each): their first states before it returns (so /readyz is
 * right from the first request), then every probe's until stopReadRouting (db/orm.ts closeOrm).
 * `source` 'told': states come through ReadRouting.apply (a cluster's worker: src/cluster.ts).
 * `primaryUrl`: where the primary's WAL position is asked (the server itself: DATABASE_DIRECT_URL).
 */
export async function installReadRouting(orm: MikroORM, maxLagMs: number, applicationName?: string, source: ReplicaStatusSource = 'measure', primaryUrl?: string): Promise<ReadRouting> {
  const configured = orm.config.get('replicas') ?? [];
  const routing = new ReadRouting(orm, configured.map((r, i) => ({ name: r.name ?? `replica-${i + 1}`, url: r.clientUrl! })), maxLagMs, source, applicationName, primaryUrl);
  routings.set(orm, routing);
  routingsByDriver.set(orm.em.getDriver(), routing);
  if (source === 'measure') {
    await routing.ready();
    routing.start();
  }
  return routing;
}

export async function stopReadRouting(orm: MikroORM): Promise<void> {
  await routings.get(orm)?.stop();
}
