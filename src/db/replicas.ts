import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { isConnectionError } from '../core/errors';

/**
 * Which pool a read goes to: the primary, or a replica that is up and caught up (CONTRACT 15).
 *
 * MikroORM is given the replicas (`replicas`, mikro-orm.config.ts) and asks for a 'read'
 * connection for plain reads; it would pick one at random, healthy or not, for every read of
 * every request. Here that choice is made instead:
 * - Only a read that says it may be stale gets a replica: `readStale(em, run)`, called by the
 *   hot statements (core/statement-shapes.ts) when the request's context says so
 *   (`ctx.readFrom = 'read'`: anonymous post lists and details, decided in app.ts and
 *   graphql/replica-reads.ts). MikroORM's own reads are kept on the primary
 *   (`preferReadReplicas: false`), so every other read, every write and all work outside a
 *   request (jobs) use the primary. The context is handed down, never looked up.
 * - Only replicas in use: a poll every `pollMs` asks each replica how far it has replayed the
 *   primary's WAL, and skips one that is down, not a standby, or behind by more than
 *   `maxLagMs`. With none in use, reads go to the primary, without an error.
 * - A read that fails on a replica because of the connection (or a recovery conflict) is run
 *   again on the primary, and that replica is skipped until the next good poll.
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

/** The slice of a MikroORM connection this module uses. */
interface Conn {
  execute(query: unknown, params?: unknown[], method?: 'all' | 'get' | 'run', ctx?: unknown, loggerContext?: unknown): Promise<unknown>;
  getKnex(): { on(event: 'query', listener: () => void): unknown };
}

interface Replica extends ReplicaState {
  conn: Conn;
  /** The connection's own execute, without the retry on the primary: for the probes. */
  probeExecute: Conn['execute'];
  probing: boolean;
}

const HISTORY_MS = 60_000;

const lsn = (text: string): bigint => {
  const [hi, lo] = text.split('/');
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
};

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
  private turn = 0;

  constructor(
    private readonly primary: Conn,
    replicas: Conn[],
    readonly maxLagMs: number,
    readonly pollMs = Math.min(1000, Math.max(100, Math.round(maxLagMs / 4))),
  ) {
    this.replicas = replicas.map((conn, i) => ({
      name: `replica-${i + 1}`, conn, probeExecute: conn.execute.bind(conn), inUse: false, lagMs: null, reason: 'not checked yet', probing: false,
    }));
    this.count(primary, 'primary');
    for (const r of this.replicas) {
      const execute = r.probeExecute;
      // Counted here rather than from knex's events, so the health probes stay out of the count.
      r.conn.execute = async (...args) => {
        for (const l of this.listeners) l(r.name);
        try {
          return await execute(...args);
        } catch (err) {
          if (!retryOnPrimary(err)) throw err;
          this.skip(r, 'down');
          return this.primary.execute(...args);
        }
      };
    }
  }

  /**
   * Runs a read that may be stale on the next replica in use, or on the primary when none is;
   * a read that fails on a replica because of its connection (or a recovery conflict) skips
   * that replica until the next good poll and runs again on the primary, so the caller sees no
   * error. `run` gets the connection to use.
   */
  async read<C, T>(run: (conn: C) => Promise<T>): Promise<T> {
    const usable = this.replicas.filter((r) => r.inUse);
    if (!usable.length) return run(this.primary as unknown as C);
    const r = usable[this.turn++ % usable.length];
    for (const l of this.listeners) l(r.name);
    try {
      return await run(r.conn as unknown as C);
    } catch (err) {
      if (!retryOnPrimary(err)) throw err;
      this.skip(r, 'down');
      return run(this.primary as unknown as C);
    }
  }

  /** The next replica in use (round robin), or undefined: then the primary serves the read. */
  pick(): Conn | undefined {
    const usable = this.replicas.filter((r) => r.inUse);
    if (!usable.length) return undefined;
    return usable[this.turn++ % usable.length].conn;
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

  /** One poll: the primary's WAL position, then each replica's replay position against it. */
  async check(): Promise<void> {
    if (!this.replicas.length) return;
    const timeout = Math.max(500, this.pollMs);
    let head: bigint;
    try {
      const row = (await withTimeout(this.primary.execute('select pg_current_wal_lsn()::text as lsn', [], 'get'), timeout)) as { lsn: string };
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
    if (r.probing) return; // a hung replica: its last probe is still waiting, do not pile more on its pool
    r.probing = true;
    const query = r.probeExecute(
      `select pg_is_in_recovery() as standby, pg_last_wal_replay_lsn()::text as replay,
              extract(epoch from now() - pg_last_xact_replay_timestamp()) * 1000 as replay_age_ms`,
      [],
      'get',
    ) as Promise<{ standby: boolean; replay: string | null; replay_age_ms: string | number | null }>;
    query.then(() => (r.probing = false), () => (r.probing = false));
    try {
      const row = await withTimeout(query, timeout);
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

  private count(conn: Conn, pool: string): void {
    conn.getKnex().on('query', () => {
      for (const l of this.listeners) l(pool);
    });
  }

  start(): void {
    if (!this.replicas.length || this.timer) return;
    this.timer = setInterval(() => void this.check(), this.pollMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

const routings = new WeakMap<MikroORM, ReadRouting>();
const routingsByDriver = new WeakMap<object, ReadRouting>();

/**
 * A read that may be slightly stale, through `em`'s ORM: on a replica in use, else the primary
 * (ReadRouting.read). Without replicas, or inside a transaction, always the primary.
 */
export function readStale<C, T>(em: EntityManager, run: (conn: C) => Promise<T>): Promise<T> {
  const routing = routingsByDriver.get(em.getDriver());
  if (!routing || em.getTransactionContext()) return run(em.getConnection('write') as unknown as C);
  return routing.read(run);
}

/** The routing installed on `orm` by installReadRouting (db/orm.ts does it for every ORM). */
export function readRoutingOf(orm: MikroORM): ReadRouting | undefined {
  return routings.get(orm);
}

/**
 * Takes over MikroORM's choice of connection for `orm`, checks the replicas once (so /readyz
 * is right from the first request) and keeps checking them until the ORM closes.
 */
export async function installReadRouting(orm: MikroORM, maxLagMs: number): Promise<ReadRouting> {
  const driver = orm.em.getDriver() as unknown as { getConnection(type?: 'read' | 'write'): Conn; replicas: Conn[] };
  const primary = driver.getConnection('write');
  const routing = new ReadRouting(primary, driver.replicas, maxLagMs);
  driver.getConnection = (type = 'write') => {
    // Only a read that asked for 'read' explicitly; MikroORM's own reads are kept on 'write'.
    if (type !== 'read') return primary;
    return routing.pick() ?? primary;
  };
  routings.set(orm, routing);
  routingsByDriver.set(driver, routing);
  await routing.check();
  routing.start();
  const close = orm.close.bind(orm);
  orm.close = async (force?: boolean) => {
    routing.stop();
    return close(force);
  };
  return routing;
}
