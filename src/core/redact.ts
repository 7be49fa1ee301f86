/**
 * Paths as logs and traces show them: shared by the request log (http/logging.ts) and the
 * tracing attributes (core/telemetry.ts), so a secret in a path is hidden in both.
 */

/** Path segments that carry secrets: the verify-email token (logs never show it). */
const SECRET_SEGMENTS: RegExp[] = [/^(\/auth\/verify-email\/)[^/]+/i, /^(\/auth\/reset-password\/)[^/]+/i];

export function redactPath(path: string): string {
  for (const re of SECRET_SEGMENTS) if (re.test(path)) return path.replace(re, '$1[REDACTED]');
  return path;
}
