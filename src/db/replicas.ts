import { Pool } from 'pg';
import type { EntityManager, MikroORM, AbstractSqlConnection } from '@mikro-orm/postgresql';
import { isConnectionError } from '../core/errors';

/**
 * Which pool a read goes to: the primary, or a replica that is up and caught up (CONTRACT 15).
 *
 * MikroORM holds the replicas (its `replicas` option, mikro-orm.config.ts) and hands out a 'read'
 * connection, one of them at random, through `em.getConnection('read')`. This module only decides
 * whether to take it:
 * - Only a read that says it may be stale asks for one: `readStale(em, run)`, called by the hot
 *   statements (db/prepared.ts) when the request's context says so (`ctx.readFrom = 'read'`:
 *   anonymous post lists and details). MikroORM's own reads stay on the primary
 *   (`preferReadReplicas: false`), so every other read, every write and all work outside a
 *   request (jobs) use the primary.
 * - Only a replica in use: a poll every `pollMs` asks each replica, over a small pg pool of its
 *   own (so probes neither queue behind requests nor count as their statements), how far it has
 *   replayed the primary's WAL, and skips one that is down, not a standby, or behind by more than
 *   `maxLagMs`. A read whose replica is skipped runs on the primary, without an error.
 * - A read that fails on a replica because of the connection (or a recovery conflict) is run
 *   again on the primary, and that replica is skipped until its next good probe.
 *
 * Lag: a standby's `pg_last_xact_replay_timestamp()` ages on an idle primary although nothing
 * is missing, so it is not the lag. Each poll records the primary's `pg_current_wal_lsn()`
 * with the time; a replica that has replayed up to the latest recorded LSN is 0 ms behind,
 * otherwise it is behind since the first poll that saw the primary past its replay LSN. The
 * resolution is one poll interval (a quarter of the allowed lag, 100 ms to 1 s).
 */
export type SkipReason = 'down' | 'lagging' | 'not a standby' | 'not checked yet';

export interface ReplicaState {
  name: string;
  inUse: boolean;
  /** Last measured lag; null when unknown (down, never checked). */
  lagMs: number | null;
  reason: SkipReason | null;
}

/** Where a statement ran, as the ORM's logger names connections. */
export interface ReadTarget {
  type: 'read' | 'write';
  /** 'primary' or the replica's name (replica-1, ...). */
  name: string;
}
export const PRIMARY: ReadTarget = { type: 'write', name: 'primary' };

interface Replica extends ReplicaState {
  target: ReadTarget;
  /** What MikroORM's connection to it reports as host and port, to know it when handed out. */
  address: string;
  /** MikroORM's connection to it, once `getConnection('read')` has handed it out. */
  conn?: AbstractSqlConnection;
  probes: Pool;
  probing: boolean;
}

const HISTORY_MS = 60_000;

const lsn = (text: string): bigint => {
  const [hi, lo] = text.split('/');
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
};

/** Host and port as MikroORM's Connection.getConnectionOptions() reads them from a client URL. */
const addressOf = (host: string | undefined, port: number | undefined) => `${host ?? ''}:${port ?? 0}`;

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]);
}

/** Errors after which the same read on the primary will do: the replica is gone, or cancelled it (recovery conflict). */
function retryOnPrimary(err: unknown): boolean {
  return isConnectionError(err) || /conflict with recovery/i.test(String((err as Error)?.message ?? ''));
}

export class ReadRouting {
  readonly replicas: Replica[];
  private readonly samples: { at: number; lsn: bigint }[] = [];
  private readonly listeners: ((pool: string) => void)[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly orm: MikroORM,
    replicas: { name: string; url: string }[],
    readonly maxLagMs: number,
    readonly pollMs = Math.min(1000, Math.max(100, Math.round(maxLagMs / 4))),
    applicationName?: string,
  ) {
    const timeout = Math.max(500, pollMs);
    this.replicas = replicas.map(({ name, url }) => {
      const u = new URL(url);
      // One connection: a probe at a time (a hung replica's probe is not piled on, see probe()).
      const probes = new Pool({ connectionString: url, max: 1, connectionTimeoutMillis: timeout, allowExitOnIdle: true, application_name: applicationName });
      probes.on('error', () => undefined); // an idle probe connection cut by a replica going away; the next probe says 'down'
      return {
        name, target: { type: 'read', name }, address: addressOf(decodeURIComponent(u.hostname), +u.port), probes,
        inUse: false, lagMs: null, reason: 'not checked yet', probing: false,
      };
    });
    orm.em.getConnection('write').getKnex().on('query', () => this.emit('primary'));
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
    // Counted here rather than from the replica's knex events: only the requests' reads go there.
    this.emit(replica.name);
    try {
      return await run(replica.conn!, replica.target);
    } catch (err) {
      if (!retryOnPrimary(err)) throw err;
      this.skip(replica, 'down');
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

  /**
   * Called with the pool's name for every statement sent to it: 'primary' (all of them, jobs
   * included) or 'replica-N' (the requests' reads; the health probes are not counted).
   */
  onQuery(listener: (pool: string) => void): void {
    this.listeners.push(listener);
  }

  /** One statement sent to `pool` outside knex (db/prepared.ts). */
  count(pool: string): void {
    this.emit(pool);
  }

  private emit(pool: string): void {
    for (const l of this.listeners) l(pool);
  }

  /** One poll: the primary's WAL position, then each replica's replay position against it. */
  async check(): Promise<void> {
    if (!this.replicas.length) return;
    const timeout = Math.max(500, this.pollMs);
    let head: bigint;
    try {
      // Through the ORM's primary connection, out of its query log (a line per poll would drown it).
      const row = await withTimeout(
        this.orm.em.getConnection('write').execute<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn', [], 'get', undefined, { enabled: false }),
        timeout,
      );
      head = lsn(row.lsn);
    } catch {
      return; // The primary is unreachable: nothing to compare with, and the requests fail on their own.
    }
    const now = Date.now();
    this.samples.push({ at: now, lsn: head });
    while (this.samples.length > 2 && this.samples[0].at < now - HISTORY_MS) this.samples.shift();
    await Promise.all(this.replicas.map((r) => this.probe(r, timeout)));
  }

  private async probe(r: Replica, timeout: number): Promise<void> {
    if (r.probing) return; // a hung replica: its last probe is still waiting
    r.probing = true;
    const query = r.probes.query<{ standby: boolean; replay: string | null; replay_age_ms: string | number | null }>(
      `select pg_is_in_recovery() as standby, pg_last_wal_replay_lsn()::text as replay,
              extract(epoch from now() - pg_last_xact_replay_timestamp()) * 1000 as replay_age_ms`,
    );
    query.then(() => (r.probing = false), () => (r.probing = false));
    try {
      const [row] = (await withTimeout(query, timeout)).rows;
      if (!row.standby || !row.replay) return this.skip(r, 'not a standby');
      r.lagMs = this.lagOf(lsn(row.replay), row.replay_age_ms === null ? null : Number(row.replay_age_ms));
      r.inUse = r.lagMs <= this.maxLagMs;
      r.reason = r.inUse ? null : 'lagging';
    } catch {
      this.skip(r, 'down');
    }
  }

  private lagOf(replay: bigint, replayAgeMs: number | null): number {
    const latest = this.samples[this.samples.length - 1];
    if (replay >= latest.lsn) return 0;
    const i = this.samples.findIndex((s) => s.lsn > replay);
    const since = Date.now() - this.samples[i].at;
    // Behind since before our first sample: at most as old as its last replayed commit.
    return i === 0 ? Math.max(since, replayAgeMs ?? Number.POSITIVE_INFINITY) : since;
  }

  private skip(r: Replica, reason: SkipReason): void {
    r.inUse = false;
    r.reason = reason;
    if (reason === 'down') r.lagMs = null;
  }

  start(): void {
    if (!this.replicas.length || this.timer) return;
    this.timer = setInterval(() => void this.check(), this.pollMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all(this.replicas.map((r) => r.probes.end().catch(() => undefined)));
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

/** Counts a statement sent to `pool` by a path knex does not see (db/prepared.ts's own pool). */
export function countStatement(em: EntityManager, pool: string): void {
  routingsByDriver.get(em.getDriver())?.count(pool);
}

/** The routing installed on `orm` by installReadRouting (db/orm.ts does it for every ORM with replicas). */
export function readRoutingOf(orm: MikroORM): ReadRouting | undefined {
  return routings.get(orm);
}

/**
 * Counts `orm`'s statements per pool and watches the replicas MikroORM was configured with
 * (`replicas`: name and clientUrl each): checks them once (so /readyz is right from the first
 * request), then keeps checking them until stopReadRouting (db/orm.ts closeOrm).
 */
export async function installReadRouting(orm: MikroORM, maxLagMs: number, applicationName?: string): Promise<ReadRouting> {
  const configured = orm.config.get('replicas') ?? [];
  const routing = new ReadRouting(orm, configured.map((r, i) => ({ name: r.name ?? `replica-${i + 1}`, url: r.clientUrl! })), maxLagMs, undefined, applicationName);
  routings.set(orm, routing);
  routingsByDriver.set(orm.em.getDriver(), routing);
  await routing.check();
  routing.start();
  return routing;
}

export async function stopReadRouting(orm: MikroORM): Promise<void> {
  await routings.get(orm)?.stop();
}
