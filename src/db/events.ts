import type { EntityManager } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import type { Logger } from '../core/logger';
import { tracing } from '../core/tracing';
import { runStatement, sql } from './statements';

/**
 * Live events (GraphQL subscriptions). Services state facts ("post 12 was published") inside the write's
 * own transaction with `pg_notify`: PostgreSQL delivers a NOTIFY only if that transaction
 * commits, and in commit order, so a rolled-back write emits nothing and no event overtakes the
 * row it names. Every process holds ONE listening connection (outside the ORM pool) and fans
 * each event out to its own subscribers, so a write on any instance or worker reaches all.
 * The payload carries ids only: what a subscriber receives is read through a context like its
 * own, with the ORM's filters and the presenters a query uses.
 */
export type LiveEvent =
  | { type: 'postPublished'; postId: number }
  | { type: 'commentAdded'; postId: number; commentId: number }
  | { type: 'tenantPostCreated'; tenantId: number; tenantPostId: number }
  /** Trashed or deleted for good: subscriptions about these posts complete. */
  | { type: 'postsGone'; postIds: number[] }
  /**
   * A mail was queued: sent by the database itself, from the trigger on `mail_outbox` inserts, in
   * the enqueuing transaction (migration MailOutboxNotify), so it wakes the outbox only once the
   * mail is committed. Subscriptions ignore it.
   */
  | { type: 'mailQueued' };

/**
 * An event as received: `at` is the emitter's clock at NOTIFY (delivery lag is measured from it);
 * `tp`, with tracing on, the writer's W3C traceparent (its delivery spans continue that trace).
 */
export type ReceivedEvent = LiveEvent & { at: number; tp?: string };

const EVENTS_CHANNEL = 'blog_live_events';
/** NOTIFY payloads must stay under 8000 bytes: id lists are cut into chunks of this many. */
const IDS_PER_NOTIFY = 500;

function payloads(events: LiveEvent[]): string[] {
  const at = Date.now();
  const tp = tracing()?.traceparent();
  const out: string[] = [];
  for (const e of events) {
    if (e.type !== 'postsGone') out.push(JSON.stringify(tp ? { ...e, at, tp } : { ...e, at }));
    else for (let i = 0; i < e.postIds.length; i += IDS_PER_NOTIFY) out.push(JSON.stringify({ type: e.type, postIds: e.postIds.slice(i, i + IDS_PER_NOTIFY), at }));
  }
  return out;
}

/** Queues events on the EntityManager's transaction (or as their own statement when there is none). */
export async function emit(em: EntityManager, events: LiveEvent[]): Promise<void> {
  for (const p of payloads(events)) await runStatement(em, sql`select pg_notify(${EVENTS_CHANNEL}, ${p})`);
}

/**
 * Flushes the unit of work and emits in one transaction. `events` runs after the flush, so it
 * can name ids the flush assigned. Inside a caller's transaction the caller's commit decides.
 */
export async function flushAndEmit(em: EntityManager, events: () => LiveEvent[]): Promise<void> {
  if (em.isInTransaction()) {
    await em.flush();
    await emit(em, events());
    return;
  }
  await em.begin();
  try {
    await em.flush();
    await emit(em, events());
    await em.commit();
  } catch (err) {
    await em.rollback().catch(() => undefined);
    throw err;
  }
}

function parse(payload: string | undefined): ReceivedEvent | null {
  try {
    const e = JSON.parse(payload ?? '') as ReceivedEvent;
    return e && typeof e.type === 'string' && typeof e.at === 'number' ? e : null;
  } catch {
    return null;
  }
}

/**
 * The process's LISTEN connection to one database, shared by every EventListener on it: the
 * subscriptions' hub (graphql/ws.ts, from the first subscribe) and the mail outbox (woken by
 * `mailQueued`, modules/mail). Opened by the first listener's start(), closed with the last
 * listener; on loss it reconnects with backoff and tells its listeners (onReconnect) once LISTEN
 * is active again. Events committed while it is down are not replayed: NOTIFY is not a log, and
 * subscribers are told nothing (documented in the README); the outbox drains on reconnect.
 */
class SharedListen {
  private static readonly byUrl = new Map<string, SharedListen>();
  private client: Client | null = null;
  private starting: Promise<void> | null = null;
  private closed = false;
  private retryMs = 250;
  private retry: NodeJS.Timeout | null = null;
  private readonly listeners = new Set<EventListener>();

  private constructor(
    private readonly databaseUrl: string,
    private readonly log: Logger,
  ) {}

  static join(databaseUrl: string, listener: EventListener, log: Logger): SharedListen {
    let shared = SharedListen.byUrl.get(databaseUrl);
    if (!shared) SharedListen.byUrl.set(databaseUrl, (shared = new SharedListen(databaseUrl, log)));
    shared.listeners.add(listener);
    return shared;
  }

  async leave(listener: EventListener): Promise<void> {
    if (!this.listeners.delete(listener) || this.listeners.size) return;
    if (SharedListen.byUrl.get(this.databaseUrl) === this) SharedListen.byUrl.delete(this.databaseUrl);
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    await this.starting?.catch(() => undefined);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  /** Resolves once LISTEN is active. */
  start(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('event listener closed'));
    return (this.starting ??= this.connect().catch((err) => {
      this.starting = null;
      throw err;
    }));
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.databaseUrl, connectionTimeoutMillis: 3000 });
    client.on('notification', (msg) => {
      if (msg.channel !== EVENTS_CHANNEL) return;
      const e = parse(msg.payload);
      if (e) for (const l of this.listeners) l.deliver(e);
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    await client.connect();
    await client.query(`listen ${EVENTS_CHANNEL}`);
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.retryMs = 250;
  }

  private lost(client: Client, err?: Error): void {
    if (this.client !== client || this.closed) return;
    this.client = null;
    this.starting = null;
    client.end().catch(() => undefined);
    this.log.warn({ err }, 'live events: LISTEN connection lost; reconnecting');
    const again = () => {
      this.retry = null;
      if (this.closed) return;
      this.start().then(
        () => {
          for (const l of this.listeners) l.reconnected();
        },
        () => {
          this.retryMs = Math.min(this.retryMs * 2, 30_000);
          this.retry = setTimeout(again, this.retryMs);
          this.retry.unref();
        },
      );
    };
    this.retry = setTimeout(again, this.retryMs);
    this.retry.unref();
  }
}

/**
 * One listener of the process's LISTEN connection (SharedListen): `onEvent` hears every event
 * on the channel, `onReconnect` that the connection came back after a loss (events meanwhile
 * may be missed).
 */
export class EventListener {
  private readonly shared: SharedListen;
  private closed = false;

  constructor(
    databaseUrl: string,
    private readonly onEvent: (e: ReceivedEvent) => void,
    log: Logger,
    private readonly opts: { onReconnect?: () => void } = {},
  ) {
    this.shared = SharedListen.join(databaseUrl, this, log);
  }

  /** Resolves once LISTEN is active, so a subscriber registered after it misses no later commit. */
  start(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('event listener closed'));
    return this.shared.start();
  }

  /** @internal SharedListen's fan-out. */
  deliver(e: ReceivedEvent): void {
    if (!this.closed) this.onEvent(e);
  }

  /** @internal */
  reconnected(): void {
    if (!this.closed) this.opts.onReconnect?.();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.shared.leave(this);
  }
}
