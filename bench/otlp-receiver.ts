import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/**
 * A real OTLP/HTTP trace receiver on loopback (POST /v1/traces), for the telemetry tests and the
 * bench's service with tracing on: it accepts both encodings the service can be configured with
 * (OTEL_EXPORTER_OTLP_PROTOCOL `http/protobuf`: application/x-protobuf, decoded here from the wire
 * format of opentelemetry/proto/collector/trace/v1; `http/json`: application/json, OTLP's JSON
 * mapping) and keeps every span, normalised. Run alone (`node dist/bench/otlp-receiver.js [port]`)
 * it only counts what it receives (the bench's sink).
 */

export type SpanKindName = 'UNSPECIFIED' | 'INTERNAL' | 'SERVER' | 'CLIENT' | 'PRODUCER' | 'CONSUMER';
const KINDS: SpanKindName[] = ['UNSPECIFIED', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'];

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  kind: SpanKindName;
  /** Start and end, nanoseconds since the epoch. */
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, unknown>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  scope: string;
  resource: Record<string, unknown>;
  /** The request's encoding. */
  encoding: 'protobuf' | 'json';
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Export requests received, by encoding. */
  requests: { protobuf: number; json: number };
  /** Spans received so far (kept or not). */
  received(): number;
  /** Answers every export with this status from now on (a collector that is down: 503). */
  failWith(status: number | null): void;
  close(): Promise<void>;
}

export async function startOtlpReceiver(opts: { port?: number; keep?: boolean } = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests = { protobuf: 0, json: 0 };
  let counted = 0;
  let failure: number | null = null;
  const keep = opts.keep ?? true;
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await read(req);
      if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const type = String(req.headers['content-type'] ?? '');
      const json = type.startsWith('application/json');
      requests[json ? 'json' : 'protobuf']++;
      if (failure !== null) {
        res.writeHead(failure).end();
        return;
      }
      try {
        const got = json ? fromJson(JSON.parse(body.toString('utf8'))) : fromProtobuf(body);
        if (keep) spans.push(...got);
        counted += got.length;
      } catch (err) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(err));
        return;
      }
      // An empty ExportTraceServiceResponse: zero bytes in protobuf, {} in JSON.
      if (json) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    })().catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    failWith: (status) => void (failure = status),
    received: () => counted,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

async function read(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks);
  return req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
}

// ---- OTLP JSON (ids are hex strings, enums numbers, 64-bit integers strings) ----

interface JsonAnyValue { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number; arrayValue?: { values?: JsonAnyValue[] }; kvlistValue?: { values?: JsonKeyValue[] }; bytesValue?: string }
interface JsonKeyValue { key: string; value?: JsonAnyValue }

function jsonValue(v: JsonAnyValue | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(jsonValue);
  if (v.kvlistValue) return jsonAttributes(v.kvlistValue.values);
  if (v.bytesValue !== undefined) return v.bytesValue;
  return undefined;
}

function jsonAttributes(kvs: JsonKeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of kvs ?? []) out[kv.key] = jsonValue(kv.value);
  return out;
}

function fromJson(doc: { resourceSpans?: { resource?: { attributes?: JsonKeyValue[] }; scopeSpans?: { scope?: { name?: string }; spans?: Record<string, unknown>[] }[] }[] }): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of doc.resourceSpans ?? []) {
    const resource = jsonAttributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: String(s.traceId ?? '').toLowerCase(),
          spanId: String(s.spanId ?? '').toLowerCase(),
          parentSpanId: String(s.parentSpanId ?? '').toLowerCase(),
          name: String(s.name ?? ''),
          kind: KINDS[Number(s.kind ?? 0)] ?? 'UNSPECIFIED',
          startNs: BigInt(String(s.startTimeUnixNano ?? 0)),
          endNs: BigInt(String(s.endTimeUnixNano ?? 0)),
          attributes: jsonAttributes(s.attributes as JsonKeyValue[] | undefined),
          statusCode: Number((s.status as { code?: number } | undefined)?.code ?? 0),
          scope: ss.scope?.name ?? '',
          resource,
          encoding: 'json',
        });
      }
    }
  }
  return out;
}

// ---- OTLP protobuf: the wire format, read field by field ----

class Reader {
  pos = 0;
  constructor(readonly buf: Buffer, readonly end = buf.length) {}
  done() {
    return this.pos >= this.end;
  }
  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = this.buf[this.pos++];
      if (b === undefined) throw new Error('truncated varint');
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
      shift += 7n;
    }
  }
  /** Each field as [number, wire type, a reader of its bytes or its scalar value]. */
  *fields(): Generator<[number, number, Reader | bigint | Buffer]> {
    while (!this.done()) {
      const key = Number(this.varint());
      const field = key >>> 3;
      const wire = key & 7;
      if (wire === 0) yield [field, wire, this.varint()];
      else if (wire === 1) {
        const v = this.buf.readBigUInt64LE(this.pos);
        this.pos += 8;
        yield [field, wire, v];
      } else if (wire === 5) {
        const v = BigInt(this.buf.readUInt32LE(this.pos));
        this.pos += 4;
        yield [field, wire, v];
      } else if (wire === 2) {
        const len = Number(this.varint());
        const sub = new Reader(this.buf.subarray(this.pos, this.pos + len));
        this.pos += len;
        yield [field, wire, sub];
      } else throw new Error(`wire type ${wire} not expected in OTLP`);
    }
  }
}

const bytesOf = (r: Reader) => r.buf.subarray(0, r.end);
const textOf = (r: Reader) => bytesOf(r).toString('utf8');

/** AnyValue: string 1, bool 2, int 3, double 4, array 5, kvlist 6, bytes 7. */
function protoValue(r: Reader): unknown {
  for (const [f, , v] of r.fields()) {
    if (f === 1) return textOf(v as Reader);
    if (f === 2) return (v as bigint) !== 0n;
    if (f === 3) return Number(BigInt.asIntN(64, v as bigint));
    if (f === 4) {
      const b = Buffer.alloc(8);
      b.writeBigUInt64LE(v as bigint);
      return b.readDoubleLE(0);
    }
    if (f === 5) {
      const values: unknown[] = [];
      for (const [ff, , vv] of (v as Reader).fields()) if (ff === 1) values.push(protoValue(vv as Reader));
      return values;
    }
    if (f === 6) {
      const kv: Record<string, unknown> = {};
      for (const [ff, , vv] of (v as Reader).fields()) if (ff === 1) Object.assign(kv, protoKeyValue(vv as Reader));
      return kv;
    }
    if (f === 7) return bytesOf(v as Reader).toString('base64');
  }
  return undefined;
}

/** KeyValue: key 1, value 2. */
function protoKeyValue(r: Reader): Record<string, unknown> {
  let key = '';
  let value: unknown;
  for (const [f, , v] of r.fields()) {
    if (f === 1) key = textOf(v as Reader);
    else if (f === 2) value = protoValue(v as Reader);
  }
  return { [key]: value };
}

/** ExportTraceServiceRequest: resource_spans 1 → resource 1 (attributes 1), scope_spans 2 → scope 1 (name 1), spans 2. */
function fromProtobuf(body: Buffer): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const [f, , rsv] of new Reader(body).fields()) {
    if (f !== 1) continue;
    const resource: Record<string, unknown> = {};
    const scopes: Reader[] = [];
    for (const [rf, , v] of (rsv as Reader).fields()) {
      if (rf === 1) for (const [af, , av] of (v as Reader).fields()) if (af === 1) Object.assign(resource, protoKeyValue(av as Reader));
      if (rf === 2) scopes.push(v as Reader);
    }
    for (const ss of scopes) {
      let scope = '';
      const spans: Reader[] = [];
      for (const [sf, , v] of ss.fields()) {
        if (sf === 1) for (const [nf, , nv] of (v as Reader).fields()) if (nf === 1) scope = textOf(nv as Reader);
        if (sf === 2) spans.push(v as Reader);
      }
      for (const sp of spans) out.push({ ...protoSpan(sp), scope, resource, encoding: 'protobuf' });
    }
  }
  return out;
}

/** Span: trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6, start 7, end 8, attributes 9, status 15 (code 3). */
function protoSpan(r: Reader): Omit<ReceivedSpan, 'scope' | 'resource' | 'encoding'> {
  const s: Omit<ReceivedSpan, 'scope' | 'resource' | 'encoding'> = { traceId: '', spanId: '', parentSpanId: '', name: '', kind: 'UNSPECIFIED', startNs: 0n, endNs: 0n, attributes: {}, statusCode: 0 };
  for (const [f, , v] of r.fields()) {
    if (f === 1) s.traceId = bytesOf(v as Reader).toString('hex');
    else if (f === 2) s.spanId = bytesOf(v as Reader).toString('hex');
    else if (f === 4) s.parentSpanId = bytesOf(v as Reader).toString('hex');
    else if (f === 5) s.name = textOf(v as Reader);
    else if (f === 6) s.kind = KINDS[Number(v)] ?? 'UNSPECIFIED';
    else if (f === 7) s.startNs = v as bigint;
    else if (f === 8) s.endNs = v as bigint;
    else if (f === 9) Object.assign(s.attributes, protoKeyValue(v as Reader));
    else if (f === 15) for (const [sf, , sv] of (v as Reader).fields()) if (sf === 3) s.statusCode = Number(sv);
  }
  return s;
}

/** The value of OTEL_EXPORTER_OTLP_ENDPOINT that asks a bench script for a receiver of its own. */
export const AUTO_ENDPOINT = 'auto';

/**
 * For the bench's service with tracing on: when `env` asks for OTEL_EXPORTER_OTLP_ENDPOINT=auto,
 * starts this receiver as a process of its own (it decodes and counts every span: its CPU is
 * not the service's) and points the endpoint at it. `stop()` ends it and says how many spans it got.
 */
export async function withReceiver(env: Record<string, string>): Promise<{ env: Record<string, string>; stop(): Promise<string> }> {
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT !== AUTO_ENDPOINT) return { env, stop: async () => '' };
  const child = spawn(process.execPath, [__filename, '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`OTLP receiver exited with ${code}`)));
    child.stdout.on('data', () => {
      const m = /OTLP receiver on (http:\/\/[^\s]+)\/v1\/traces/.exec(out);
      if (m) resolve(m[1]);
    });
  });
  return {
    env: { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: url },
    stop: () =>
      new Promise<string>((resolve) => {
        child.removeAllListeners('exit');
        child.once('exit', () => resolve(/received .*/.exec(out)?.[0] ?? ''));
        child.kill('SIGTERM');
      }),
  };
}

if (require.main === module) {
  const port = Number(process.argv[2] ?? 4318);
  void startOtlpReceiver({ port, keep: false }).then((r) => {
    process.stdout.write(`OTLP receiver on ${r.url}/v1/traces\n`);
    const report = () => process.stdout.write(`received ${r.received()} spans in ${r.requests.protobuf + r.requests.json} exports\n`);
    process.on('SIGTERM', () => {
      report();
      void r.close().then(() => process.exit(0));
    });
    process.on('SIGINT', () => {
      report();
      void r.close().then(() => process.exit(0));
    });
  });
}
