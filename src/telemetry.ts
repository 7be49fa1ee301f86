import cluster from 'node:cluster';
import { loadConfig } from './config/config';

/**
 * OpenTelemetry's entry, imported by main.ts right after core/heap and before
 * anything else: the instrumentations patch `http`, `express`, `pg` and `graphql` as they are
 * required, so the SDK must be running before any of them is. When tracing is off (no
 * OTEL_EXPORTER_OTLP_ENDPOINT nor OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) this module requires
 * nothing more and the service runs without a line of OpenTelemetry loaded. A cluster's primary
 * (WEB_CONCURRENCY > 1) serves no request and loads none either; its workers do.
 * Settings that do not parse are left to main.ts, which reports them.
 */
function wanted(): { serviceName: string | undefined; sdkLogLevel: string | undefined } | null {
  try {
    const config = loadConfig();
    if (!config.tracing.enabled) return null;
    if (cluster.isPrimary && config.webConcurrency > 1) return null;
    return config.tracing;
  } catch {
    return null;
  }
}

const settings = wanted();
if (settings) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- because the SDK must patch http, express and pg before they load, and only when tracing is on: import() would run after the app's modules
  const { startTelemetry }: typeof import('./core/telemetry') = require('./core/telemetry');
  startTelemetry(settings);
}
