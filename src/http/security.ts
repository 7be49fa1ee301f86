import cors from 'cors';
import helmet from 'helmet';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The security headers of every answer. An answer of this API is JSON: no browser should render
 * it as a page, load anything on its behalf, frame it, or read it from another site without CORS.
 * So the set is the one OWASP's REST Security Cheat Sheet gives for APIs: a CSP that allows
 * nothing, DENY framing, nosniff, HSTS, no referrer, and a same-origin resource policy. Helmet's
 * other headers only mean something to an HTML document (opener and agent-cluster isolation,
 * DNS prefetching, IE8 downloads, the XSS auditor); the pages get them from `asDocument`.
 * Half the headers, a sixth of the bytes: every client parses them on every answer
 * (npm run bench, GET /posts/:id).
 */
export const API_HEADERS: readonly (readonly [string, string])[] = [
  ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
  ['Cross-Origin-Resource-Policy', 'same-origin'],
  ['Referrer-Policy', 'no-referrer'],
  ['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
];

/**
 * Express middleware for the HTML pages and their files, the locally served Swagger UI (/docs)
 * and GraphiQL (/graphql in a browser): helmet's document headers over the API's. The pages load
 * every script from this origin (their start scripts are files too, so no inline script runs),
 * and both use inline styles, which are allowed; nothing is loaded from another origin, nothing
 * may frame the pages. The files get them too: a worker's policy is its script's. Helmet runs as
 * the middleware it is documented to be: only pages pass here, never the API's small answers.
 */
export const asDocument: (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void = helmetPolicy();

function helmetPolicy() {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        fontSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        // GraphiQL's editor (Monaco) runs its language services in workers from files of this origin, not blob: URLs.
        workerSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
      },
    },
    // Same-origin pages only; the API itself is reached cross-origin through CORS, which CORP does not block.
    crossOriginResourcePolicy: { policy: 'same-origin' },
    referrerPolicy: { policy: 'no-referrer' },
  });
}

/**
 * CORS from CORS_ORIGINS: empty means no cross-origin access at all (no CORS headers, so a
 * browser refuses the answer); otherwise only the listed origins, which may send the bearer
 * token, the tenant header and If-None-Match, and read ETag. Preflights are answered here (204),
 * before the 404/405 guard, which would otherwise see an OPTIONS request for a path. Credentials
 * (cookies) are never used.
 */
export function corsPolicy(origins: readonly string[]): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  if (origins.length === 0) return (_req, _res, next) => next();
  return cors({
    origin: [...origins],
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    // If-None-Match and ETag: a script may revalidate public reads itself (core/http.ts).
    allowedHeaders: ['Authorization', 'Content-Type', 'X-Tenant-Id', 'X-Request-Id', 'If-None-Match', 'Idempotency-Key'],
    exposedHeaders: ['Retry-After', 'X-Request-Id', 'ETag', 'Idempotent-Replayed'],
    credentials: false,
    maxAge: 600,
    optionsSuccessStatus: 204,
  });
}
