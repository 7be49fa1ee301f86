import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  createSourceEventStream,
  execute,
  getOperationAST,
  GraphQLError,
  parse,
  specifiedRules,
  validate,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLSchema,
} from 'graphql';
import type { WebSocket } from 'ws';
import { buildRequestContext, type RequestContext } from '../core/context';
import { toAppError } from '../core/errors';
import { onFirstUse } from '../core/lazy';
import { EventListener } from '../db/events';
import { directUrlOf } from '../db/orm';
import { tracing } from '../core/tracing';
import type { TenantResolver } from '../core/tenant';
import { clientIpReader } from '../core/client-ip';
import type { SubscriptionMetrics } from '../core/metrics';
import type { AppDeps, Services } from '../modules/services';
import { formatError } from './errors';
import { limitRules } from './limits';
import { LiveHub, type Delivery, type LiveContext } from './live';
import type { TrustedDocuments } from './documents';

/** Operations one connection may run at once. */
const MAX_SUBSCRIPTIONS_PER_CONNECTION = 50;
const GRAPHQL_PATH = '/graphql';

interface Connection {
  ip: string;
  authorization: string | undefined;
  tenantId: number | null;
  expiry?: NodeJS.Timeout;
}

export interface SubscriptionServer {
  /** Serves graphql-transport-ws on the server's upgrades to /graphql. */
  attach(server: Server): void;
  /** Completes every subscription, closes every socket with 1001, stops listening for events. */
  close(): Promise<void>;
  hub: LiveHub;
  /** Connections and subscribes handled so far: work, for core/heap.ts's idle release as HTTP requests are. */
  handled(): number;
}

export interface SubscriptionServerOptions {
  schema: GraphQLSchema;
  deps: AppDeps;
  services: Services;
  resolveTenant: TenantResolver;
  state: { draining: boolean };
  metrics: SubscriptionMetrics;
  /** Trusted documents: `extensions.documentId`, and in `only` mode nothing but manifest documents. */
  documents?: TrustedDocuments;
}

/**
 * The GraphQL WebSocket endpoint (graphql-transport-ws). The caller is established at `connection_init`
 * exactly as an HTTP request's (buildRequestContext, the same token checks and tenant resolver);
 * each operation then gets a context of its own, like a request, and each delivered event
 * executes with the context the event's row was read through (graphql/live.ts).
 */
export function createSubscriptionServer(opts: SubscriptionServerOptions): SubscriptionServer {
  const { schema, deps, services } = opts;
  const { orm, log } = deps;
  const clientIp = clientIpReader(deps.config.trustProxy);
  const format = formatError(log);
  const formatAll = (errors: readonly GraphQLError[]) => errors.map((e) => format(e.toJSON(), e));
  const connections = new WeakMap<WebSocket, Connection>();
  const perIp = new Map<string, number>();
  /** graphql-ws's per-connection state, to see when every operation has sent its `complete`. */
  const live = new Set<{ subscriptions: Record<string, unknown> }>();
  const limitPerIp = deps.config.subscriptionConnectionsPerIp;
  let closing = false;

  const listener = new EventListener(directUrlOf(orm), (e) => hub.dispatch(e), log);
  const hub: LiveHub = new LiveHub({
    listen: () => listener.start(),
    // Always the primary (no readFrom 'read'): the NOTIFY arrives once the write committed on the
    // primary, and a replica may not have replayed that commit yet.
    makeContext: (tenantId) => {
      const ctx = buildRequestContext(orm, services.tokens, { requestId: randomUUID(), ip: 'internal', tenantId, authorization: undefined });
      ctx.readFrom = 'write';
      return ctx;
    },
    log,
    onActive: opts.metrics.active,
  });

  /**
   * The WebSocket server and graphql-ws on it, built on the first upgrade (core/lazy.ts): a
   * process no subscriber connects to never loads either.
   */
  const endpoint = onFirstUse(() => {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const ws = require('ws') as typeof import('ws');
    const gws = { ...(require('graphql-ws') as typeof import('graphql-ws')), ...(require('graphql-ws/use/ws') as typeof import('graphql-ws/use/ws')) };
    /* eslint-enable @typescript-eslint/no-require-imports */
    const wss = new ws.WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
    wss.on('connection', (socket) => {
      opts.metrics.socketOpened(1);
      socket.once('close', () => {
        opts.metrics.socketOpened(-1);
        const c = connections.get(socket);
        if (c?.expiry) clearTimeout(c.expiry);
      });
    });

    const operationContext = (socket: WebSocket): LiveContext => {
      const c = connections.get(socket)!;
      const ctx = buildRequestContext(orm, services.tokens, { requestId: randomUUID(), ip: c.ip, tenantId: c.tenantId, authorization: c.authorization });
      return Object.assign(ctx, { live: hub });
    };

    const server = gws.useServer(
      {
        schema,
        async onConnect(ctx) {
          handled++;
          const { socket, request } = ctx.extra;
          const params = ctx.connectionParams ?? {};
          const authorization = typeof params.authorization === 'string' ? params.authorization : undefined;
          const rawTenant = params.tenantId;
          const tenantId = opts.resolveTenant({ headers: { 'x-tenant-id': typeof rawTenant === 'string' || typeof rawTenant === 'number' ? String(rawTenant) : undefined }, hostname: request.headers.host });
          const conn: Connection = { ip: clientIp(request), authorization, tenantId };
          const probe = buildRequestContext(orm, services.tokens, { requestId: randomUUID(), ip: conn.ip, tenantId, authorization });
          try {
            if (await probe.actor()) {
              // A connection lives no longer than its token; verified above, so decoding is safe.
              const exp = services.tokens.expiryOf(/\S+$/.exec(authorization!)![0]);
              if (exp) {
                conn.expiry = setTimeout(() => socket.close(gws.CloseCode.Unauthorized, 'Token expired'), Math.max(0, exp * 1000 - Date.now()));
                conn.expiry.unref();
              }
            }
          } catch (err) {
            const e = toAppError(err);
            socket.close(e.status === 401 ? gws.CloseCode.Unauthorized : e.status === 503 ? 1013 : gws.CloseCode.InternalServerError, e.status < 500 ? e.message : 'Service unavailable');
            return false;
          } finally {
            probe.em.clear();
          }
          connections.set(socket, conn);
          live.add(ctx);
          return true;
        },
        onClose(ctx) {
          live.delete(ctx);
        },
        async onSubscribe(ctx, id, payload) {
          handled++;
          if (Object.keys(ctx.subscriptions).length > MAX_SUBSCRIPTIONS_PER_CONNECTION) {
            return [new GraphQLError(`At most ${MAX_SUBSCRIPTIONS_PER_CONNECTION} subscriptions per connection`, { extensions: { code: 'TOO_MANY_REQUESTS' } })];
          }
          // A manifest document named by `extensions.documentId`, or (in `only` mode) sent as its exact text.
          let text = payload.query;
          if (opts.documents) {
            const r = opts.documents.resolveSubscribe(payload);
            if (r.kind === 'refused') return [r.error];
            if (r.kind === 'document') text = r.query;
          }
          let document;
          try {
            document = parse(text, { maxTokens: 5000 });
          } catch (err) {
            return [err as GraphQLError];
          }
          const errors = validate(schema, document, [...specifiedRules, ...limitRules]);
          if (errors.length) return errors;
          const contextValue = operationContext(ctx.extra.socket);
          const op = getOperationAST(document, payload.operationName);
          const first = op?.selectionSet.selections[0];
          log.info(
            { requestId: contextValue.requestId, transport: 'ws', operationId: id, operation: op?.name?.value ?? null, type: op?.operation ?? null, field: first?.kind === 'Field' ? first.name.value : null },
            'subscribe',
          );
          sameOperation.set(document, JSON.stringify([text, payload.operationName ?? null, payload.variables ?? null]));
          return { schema, document, operationName: payload.operationName, variableValues: payload.variables, contextValue } satisfies ExecutionArgs;
        },
        subscribe: (args) => subscribeWithDeliveries(args, opts.metrics),
        onNext: (_ctx, _id, _payload, _args, result) => (result.errors ? { ...result, errors: formatAll(result.errors) } : undefined),
        onError: (_ctx, _id, _payload, errors) => formatAll(errors),
      },
      wss,
    );
    return { wss, server };
  });
  let opened = false;
  let handled = 0;

  const refuse = (socket: Duplex, status: number, text: string, message: string) => {
    const body = JSON.stringify({ message });
    socket.end(`HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json; charset=utf-8\r\nCache-Control: no-store\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  };

  return {
    hub,
    handled: () => handled,
    attach(http) {
      http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
        socket.on('error', () => socket.destroy());
        if (new URL(req.url ?? '/', 'http://localhost').pathname !== GRAPHQL_PATH) return refuse(socket, 404, 'Not Found', 'Not found');
        if (closing || opts.state.draining) return refuse(socket, 503, 'Service Unavailable', 'Service unavailable');
        const ip = clientIp(req);
        const open = perIp.get(ip) ?? 0;
        if (limitPerIp > 0 && open >= limitPerIp) return refuse(socket, 429, 'Too Many Requests', 'Too many requests');
        perIp.set(ip, open + 1);
        socket.once('close', () => {
          const n = (perIp.get(ip) ?? 1) - 1;
          if (n > 0) perIp.set(ip, n);
          else perIp.delete(ip);
        });
        const { wss } = endpoint();
        opened = true;
        wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
      });
    },
    async close() {
      if (closing) return;
      closing = true;
      hub.completeAll();
      // Each operation's loop sends its `complete`, then leaves ctx.subscriptions: the close frame
      // goes out after that (bounded, should a send hang).
      const pending = () => [...live].some((c) => Object.keys(c.subscriptions).length > 0);
      for (const until = Date.now() + 1000; pending() && Date.now() < until; ) await new Promise((r) => setTimeout(r, 5));
      if (opened) {
        const { wss, server } = endpoint();
        const sockets = [...wss.clients];
        const gone = Promise.all(sockets.filter((s) => s.readyState !== s.CLOSED).map((s) => new Promise((r) => s.once('close', r))));
        await server.dispose();
        // Clients answer the close frame at once; one that does not is cut.
        const cut = setTimeout(() => sockets.forEach((s) => s.terminate()), 1000);
        await gone;
        clearTimeout(cut);
      }
      await listener.close();
    },
  };
}

/** Each subscription's document, to the text that makes two subscriptions the same operation. */
const sameOperation = new WeakMap<ExecutionArgs['document'], string>();
/** Per delivery context (one per event and topic), the results already computed by operation. */
const executed = new WeakMap<RequestContext, Map<string, Promise<ExecutionResult>>>();

/**
 * graphql-js's subscribe, except that each event executes with the context it was read
 * through (the delivery's), not the one of the subscribe message: the nested fields of the
 * topic's subscribers are then batched and cached together, and see the rows as the load did.
 * Subscribers of a topic sending the same operation (text and variables) get the same answer,
 * so it is executed once per event, not once per subscriber.
 */
async function subscribeWithDeliveries(args: ExecutionArgs, metrics: SubscriptionMetrics): Promise<AsyncGenerator<ExecutionResult> | ExecutionResult> {
  const stream = await createSourceEventStream(args);
  if (!(Symbol.asyncIterator in stream)) return stream;
  // The operation's own context (an EntityManager fork) served the subscribe-time checks; every
  // delivery brings its own. graphql-ws keeps these args for the subscription's life: released
  // here, so thousands of idle subscriptions do not each hold a fork.
  (args as { contextValue: unknown }).contextValue = undefined;
  const source = stream as AsyncGenerator<Delivery>;
  const mapped = {
    async next(): Promise<IteratorResult<ExecutionResult>> {
      const r = await source.next();
      if (r.done) return { value: undefined, done: true };
      const d = r.value;
      const key = sameOperation.get(args.document);
      let memo = executed.get(d.ctx);
      if (!memo) executed.set(d.ctx, (memo = new Map()));
      let pending = key === undefined ? undefined : memo.get(key);
      if (!pending) {
        const run = () => execute({ ...args, rootValue: d.value, contextValue: d.ctx });
        // With tracing on, below the delivery's span (graphql/live.ts).
        pending = Promise.resolve(d.trace === undefined ? run() : tracing()!.within(d.trace, run));
        if (key !== undefined) memo.set(key, pending);
      }
      const result = await pending;
      metrics.delivered(d.field, Date.now() - d.at);
      return { value: result, done: false };
    },
    return: () => source.return(undefined).then(() => ({ value: undefined, done: true as const })),
    throw: (err: unknown) => source.throw(err).then(() => ({ value: undefined, done: true as const })),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
  return mapped as unknown as AsyncGenerator<ExecutionResult>;
}
