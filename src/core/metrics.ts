import type { Request, Response } from 'express';
import type { ApolloServerPlugin } from '@apollo/server';
import type { Registry } from 'prom-client';

/** What the surfaces report (http/chain.ts, graphql/ws.ts); http/metrics.ts createMetrics keeps it in prom-client. */
export interface Metrics {
  /** This app's own registry (never prom-client's global one), so several apps can live in one process. */
  registry: Registry;
  /** One answered HTTP request: its route pattern (never the raw path), status and seconds taken. */
  observeHttp(method: string, route: string | null, status: number, seconds: number): void;
  graphqlPlugin: ApolloServerPlugin<object>;
  handler(req: Request, res: Response): Promise<void>;
  /** What /metrics answers: this registry's text; under a cluster, every worker's summed by the primary (src/cluster.ts). */
  exposition: () => Promise<string>;
  /** GraphQL over WebSocket (graphql/ws.ts). */
  subscriptions: SubscriptionMetrics;
}

export interface SubscriptionMetrics {
  socketOpened(delta: 1 | -1): void;
  active(field: string, delta: 1 | -1): void;
  /** One event sent to one subscriber, `lagMs` after it was emitted. */
  delivered(field: string, lagMs: number): void;
}
