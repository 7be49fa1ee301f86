import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';
import type { TestApp } from './harness';
import { until } from './wait';

type ExecutionResult<T> = FormattedExecutionResult<T, unknown>;

/** What one subscription received, in order, and how it ended. */
interface Received<T = any> {
  results: ExecutionResult<T>[];
  /** Resolves with the n-th result (0-based) once it arrives. */
  nth(n: number): Promise<ExecutionResult<T>>;
  /** Settles when the server completes the subscription (or rejects on an `error` message / close). */
  ended: Promise<void>;
  /** The `error` message's payload or the close event that ended the subscription. */
  error?: unknown;
  completed: boolean;
  unsubscribe(): void;
}

export interface WsConnection {
  client: Client;
  /** Resolves once connection_ack arrived. */
  connected: Promise<void>;
  /** Resolves with the close code and reason the server closed with. */
  closed: Promise<{ code: number; reason: string }>;
  /** `extensions` go in the subscribe payload as they are (e.g. `{ documentId }`, trusted documents). */
  subscribe<T = any>(query: string, variables?: Record<string, unknown>, extensions?: Record<string, unknown>): Received<T>;
  dispose(): Promise<void>;
}

export const wsUrl = (app: TestApp) => `${app.url.replace(/^http/, 'ws')}/graphql`;

/** A real graphql-ws client over a real socket; never retries, so a refusal is seen as is. */
export function connect(app: TestApp, connectionParams: Record<string, unknown> = {}): WsConnection {
  let onConnected!: () => void;
  let onClosed!: (e: { code: number; reason: string }) => void;
  const connected = new Promise<void>((r) => (onConnected = r));
  const closed = new Promise<{ code: number; reason: string }>((r) => (onClosed = r));
  const client = createClient({
    url: wsUrl(app),
    webSocketImpl: WebSocket,
    connectionParams,
    lazy: false,
    retryAttempts: 0,
    onNonLazyError: () => undefined,
    on: {
      connected: () => onConnected(),
      closed: (e) => {
        const ev = e as { code: number; reason: string | Buffer };
        onClosed({ code: ev.code, reason: String(ev.reason) });
      },
    },
  });
  return {
    client,
    connected,
    closed,
    subscribe<T>(query: string, variables?: Record<string, unknown>, extensions?: Record<string, unknown>) {
      const waiters: { n: number; resolve: (r: ExecutionResult<T>) => void }[] = [];
      let settle!: (err?: unknown) => void;
      const received: Received<T> = {
        results: [],
        completed: false,
        ended: new Promise<void>((resolve, reject) => (settle = (err) => (err === undefined ? resolve() : reject(err)))),
        nth(n) {
          if (received.results[n]) return Promise.resolve(received.results[n]);
          return new Promise((resolve) => waiters.push({ n, resolve }));
        },
        unsubscribe: () => undefined,
      };
      received.ended.catch(() => undefined);
      received.unsubscribe = client.subscribe<T>(
        extensions ? { query, variables, extensions } : { query, variables },
        {
          next(value) {
            received.results.push(value);
            for (const w of waiters.filter((x) => x.n === received.results.length - 1)) w.resolve(value);
          },
          error(err) {
            received.error = err;
            settle(err ?? new Error('error'));
          },
          complete() {
            received.completed = true;
            settle();
          },
        },
      );
      return received;
    },
    dispose: async () => {
      await client.dispose();
    },
  };
}

/**
 * Waits until the app holds `n` subscriptions (registered and listening), so a write made
 * next is one the subscribers must receive.
 */
export async function untilSubscribed(app: TestApp, n: number): Promise<void> {
  await until(() => app.built.subscriptions.hub.size >= n, `${n} subscription(s) registered`, { everyMs: 5 });
}

/** Waits until the app holds no subscription: the server has seen every close. */
export async function untilUnsubscribed(...apps: TestApp[]): Promise<void> {
  await until(() => apps.every((app) => app.built.subscriptions.hub.size === 0), 'every subscription to end on the server', { everyMs: 5 });
}

/**
 * The same for a service in another process, read from its /metrics: `n` subscriptions to
 * `field` registered (listening, so an event committed next is delivered).
 */
export async function untilSubscribedAt(base: string, field: string, n = 1): Promise<void> {
  const gauge = new RegExp(`^graphql_subscriptions_active\\{field="${field}"\\} (\\d+)$`, 'm');
  await until(async () => Number(gauge.exec(await (await fetch(`${base}/metrics`)).text())?.[1] ?? 0) >= n, `${n} ${field} subscription(s) in ${base}/metrics`);
}
