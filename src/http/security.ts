import cors from 'cors';
import helmet from 'helmet';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Security headers for every answer, JSON or HTML. The only pages are the locally served
 * Swagger UI (/docs) and GraphiQL (/graphql in a browser): they load every script from this
 * origin (their start scripts are files too, so no inline script runs), and both use inline
 * styles, which are allowed; nothing is loaded from another origin, nothing may frame the pages.
 */
export function securityHeaders(): readonly [string, string][] {
  return helmetHeaders(helmetPolicy());
}

/**
 * Helmet's headers, computed once: with this policy (no nonces, no per-request directives) they
 * are the same for every answer, and helmet's fifteen middlewares each re-set them per request,
 * which showed in the CPU profile of small answers (npm run bench, GET /posts/:id).
 */
function helmetHeaders(middleware: ReturnType<typeof helmet>): [string, string][] {
  const headers: [string, string][] = [];
  const fake = {
    setHeader: (name: string, value: unknown) => void headers.push([name, String(value)]),
    removeHeader: () => undefined,
  };
  let done = false;
  middleware({} as IncomingMessage, fake as unknown as ServerResponse, () => (done = true));
  // Helmet calls next synchronously; a policy that did not would need the middleware itself.
  if (!done) throw new Error('helmet did not finish synchronously');
  return headers;
}

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
        workerSrc: ["'self'", 'blob:'],
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
 * token and the tenant header. Preflights are answered here (204), before the 404/405 guard,
 * which would otherwise see an OPTIONS request for a path. Credentials (cookies) are never used.
 */
export function corsPolicy(origins: readonly string[]): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  if (origins.length === 0) return (_req, _res, next) => next();
  return cors({
    origin: [...origins],
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'X-Tenant-Id', 'X-Request-Id'],
    exposedHeaders: ['Retry-After', 'X-Request-Id'],
    credentials: false,
    maxAge: 600,
    optionsSuccessStatus: 204,
  });
}
