/**
 * What the service's own code asks of tracing, with no OpenTelemetry import: set
 * by core/telemetry.ts when tracing is on (src/telemetry.ts decides, before anything else loads),
 * and `undefined` otherwise, so a call site costs one property read and nothing is loaded.
 */
export interface Tracing {
  /** `trace_id`, `span_id` and `trace_flags` of the span active now, for a log line (pino's mixin); {} outside any. */
  logFields(): Record<string, string>;
  /** The active span's context as a W3C `traceparent`, carried by a live event's NOTIFY (db/events.ts). */
  traceparent(): string | undefined;
  /**
   * One delivery of a live event to a topic's subscribers (graphql/live.ts): `run` inside a
   * CONSUMER span, a child of the writer's span when the event carried its `traceparent`.
   * `run` gets an opaque handle of the span's context, for `within`.
   */
  delivery<T>(o: { field: string; topic: string; event: string; traceparent: string | undefined; subscribers: number }, run: (span: unknown) => Promise<T>): Promise<T>;
  /** Runs `fn` in the context `delivery` handed out (the execution of a subscriber's selection). */
  within<T>(span: unknown, fn: () => T): T;
  /** Runs `fn` with tracing suppressed: the start's own work (the schema's introspection) is no trace. */
  quiet<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Where the SDK's own warnings go (an exporter that cannot reach its collector): the service's
   * log, as `warn` lines with `source: "opentelemetry"`, unless OTEL_LOG_LEVEL routes them itself.
   */
  logTo(log: { warn(obj: object, msg?: string): void }): void;
  /** Exports what is buffered and stops (shutdown); gives up after a few seconds (a collector that is down). */
  shutdown(): Promise<void>;
}

let current: Tracing | undefined;

/** The tracing hooks, or undefined when tracing is off. */
export function tracing(): Tracing | undefined {
  return current;
}

export function installTracing(t: Tracing): void {
  current = t;
}
