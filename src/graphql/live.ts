import type { RequestContext } from '../core/context';
import { AppError } from '../core/errors';
import type { ReceivedEvent } from '../db/events';
import type { Logger } from '../core/logger';
import { tracing } from '../core/tracing';

/**
 * This process's subscribers and the fan-out of events to them.
 *
 * Subscribers are filed under a topic that holds everything deciding what they may see: the
 * post for `commentAdded`, the tenant for `tenantPostCreated` (posts and comments look the same
 * to every caller, tenant or anonymous). Per event and topic the row is read ONCE, through a
 * fresh context built like a request's (the ORM filters, the presenters), and that context is
 * shared by the topic's subscribers while their selections execute, so its DataLoaders serve
 * the nested fields (authors) of a thousand subscribers from one statement.
 */
export const topics = {
  postPublished: () => 'postPublished',
  commentAdded: (postId: number) => `commentAdded:${postId}`,
  tenantPostCreated: (tenantId: number) => `tenantPostCreated:${tenantId}`,
};

export interface Delivery<T = unknown> {
  value: T;
  /** The context the subscriber's selection executes with: the one the row was read through. */
  ctx: RequestContext;
  /** When the event was emitted (ms since epoch), for the delivery lag. */
  at: number;
  field: string;
  /** With tracing on: the delivery span's context, for the execution of the subscriber's selection (graphql/ws.ts). */
  trace?: unknown;
}

export interface TopicSpec<T> {
  topic: string;
  /** The subscription field, for metrics. */
  field: string;
  /** The tenant of the delivery context (null: none). */
  tenantId: number | null;
  /** Reads what the event names as this topic's subscribers may see it; null skips the event. */
  load(ctx: RequestContext, event: ReceivedEvent): Promise<T | null>;
}

export interface LiveHubOptions {
  /** Resolves once this process LISTENs (db/events.ts). */
  listen(): Promise<void>;
  /** A context like a request's, with no caller: the row is read with the filters alone. */
  makeContext(tenantId: number | null): RequestContext;
  log: Logger;
  onActive(field: string, delta: 1 | -1): void;
}

/** A subscriber that falls this far behind is ended rather than buffered without bound. */
const MAX_BUFFERED = 100;

class Subscriber<T> implements AsyncIterableIterator<Delivery<T>> {
  private readonly buffer: Delivery<T>[] = [];
  private waiting: ((r: IteratorResult<Delivery<T>>) => void) | null = null;
  done = false;
  /** Past the subscribe-time checks (counted by `size`). */
  confirmed = false;

  constructor(
    readonly spec: TopicSpec<T>,
    private readonly onEnd: (s: Subscriber<T>) => void,
  ) {}

  push(d: Delivery<T>): void {
    if (this.done) return;
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      w({ value: d, done: false });
    } else if (this.buffer.length < MAX_BUFFERED) this.buffer.push(d);
    else this.end();
  }

  /** No more events; what is buffered is still delivered, then the subscription completes. */
  end(): void {
    if (this.done) return;
    this.done = true;
    this.onEnd(this);
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      w({ value: undefined, done: true });
    }
  }

  next(): Promise<IteratorResult<Delivery<T>>> {
    const d = this.buffer.shift();
    if (d) return Promise.resolve({ value: d, done: false });
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.waiting = resolve));
  }

  return(): Promise<IteratorResult<Delivery<T>>> {
    this.buffer.length = 0;
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(err: unknown): Promise<IteratorResult<Delivery<T>>> {
    void this.return();
    return Promise.reject(err);
  }

  [Symbol.asyncIterator]() {
    return this;
  }
}

export class LiveHub {
  private readonly byTopic = new Map<string, Set<Subscriber<unknown>>>();
  /** Per topic, events are handled one after another: commit order is delivery order. */
  private readonly chains = new Map<string, Promise<void>>();
  private closed = false;

  constructor(private readonly opts: LiveHubOptions) {}

  get size(): number {
    let n = 0;
    for (const set of this.byTopic.values()) for (const s of set) if (s.confirmed) n++;
    return n;
  }

  /**
   * Registers, then runs `check` (what the field requires, e.g. that the post exists): an event
   * committed meanwhile is buffered, not missed, and a trash committed meanwhile still ends it.
   */
  async subscribe<T>(spec: TopicSpec<T>, check?: () => Promise<void>): Promise<Subscriber<T>> {
    if (this.closed) throw AppError.unavailable();
    await this.opts.listen();
    const sub = new Subscriber<T>(spec, (s) => this.remove(s as Subscriber<unknown>));
    let set = this.byTopic.get(spec.topic);
    if (!set) this.byTopic.set(spec.topic, (set = new Set()));
    set.add(sub as Subscriber<unknown>);
    this.opts.onActive(spec.field, 1);
    try {
      await check?.();
    } catch (err) {
      await sub.return();
      throw err;
    }
    sub.confirmed = true;
    return sub;
  }

  private remove(s: Subscriber<unknown>): void {
    const set = this.byTopic.get(s.spec.topic);
    if (set?.delete(s)) {
      this.opts.onActive(s.spec.field, -1);
      if (!set.size) this.byTopic.delete(s.spec.topic);
    }
  }

  dispatch(e: ReceivedEvent): void {
    switch (e.type) {
      case 'postPublished':
        return this.enqueue(topics.postPublished(), (t) => this.deliver(t, e));
      case 'commentAdded':
        return this.enqueue(topics.commentAdded(e.postId), (t) => this.deliver(t, e));
      case 'tenantPostCreated':
        return this.enqueue(topics.tenantPostCreated(e.tenantId), (t) => this.deliver(t, e));
      case 'postsGone':
        // Through the post's chain: comments committed before the trash are delivered first.
        for (const id of e.postIds) this.enqueue(topics.commentAdded(id), (t) => this.endTopic(t));
    }
  }

  private enqueue(topic: string, work: (topic: string) => Promise<void>): void {
    if (!this.byTopic.has(topic)) return;
    const next = (this.chains.get(topic) ?? Promise.resolve()).then(() => work(topic));
    const settled = next.catch((err) => this.opts.log.error({ err, topic }, 'live events: delivery failed'));
    this.chains.set(topic, settled);
    void settled.then(() => {
      if (this.chains.get(topic) === settled) this.chains.delete(topic);
    });
  }

  private async deliver(topic: string, e: ReceivedEvent): Promise<void> {
    const subs = this.byTopic.get(topic);
    const first = subs?.values().next().value;
    if (!subs || !first) return;
    const load = async (trace?: unknown) => {
      const ctx = this.opts.makeContext(first.spec.tenantId);
      const value = await first.spec.load(ctx, e);
      if (value === null) return;
      for (const s of [...subs]) s.push({ value, ctx, at: e.at, field: s.spec.field, trace });
    };
    // With tracing on, one span per event and topic, in the writer's trace.
    const t = tracing();
    if (!t) return load();
    return t.delivery({ field: first.spec.field, topic, event: e.type, traceparent: e.tp, subscribers: subs.size }, load);
  }

  private async endTopic(topic: string): Promise<void> {
    for (const s of [...(this.byTopic.get(topic) ?? [])]) s.end();
  }

  /** Completes every subscription (shutdown); later subscribes are refused. */
  completeAll(): void {
    this.closed = true;
    for (const set of [...this.byTopic.values()]) for (const s of [...set]) s.end();
  }
}

export interface LiveContext extends RequestContext {
  live: LiveHub;
}

/** The hub of a WebSocket operation's context; subscriptions exist on no other transport. */
export function liveHub(ctx: RequestContext): LiveHub {
  const hub = (ctx as Partial<LiveContext>).live;
  if (!hub) throw AppError.badRequest('Subscriptions are served over WebSocket (graphql-transport-ws) at /graphql');
  return hub;
}
