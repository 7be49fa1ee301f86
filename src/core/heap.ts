import { setFlagsFromString } from 'node:v8';

/**
 * Imported first by main.ts, before anything allocates: turns off V8's allocation-site
 * pretenuring for this process.
 *
 * V8 watches which allocation sites' objects survive a young-generation collection and, past a
 * threshold, allocates everything from such a site in the old generation from then on. A service
 * fools it at start: its first requests wait for new database connections, so every object of
 * the request path survives and its sites are tenured for good. Each later request then left its
 * context, statement values and promises to the full collections: under load the old generation
 * grew ~1 MB per young collection and peak RSS was 214–239 MB. Without pretenuring, the same
 * load peaks at 148–163 MB, and GET /posts/:id serves ~2% more (npm run bench; docs/performance.md).
 * V8 reads the flag each time it weighs the sites, so setting it at run time works; a V8 without
 * it prints "unrecognized flag" once and runs on as before.
 */
setFlagsFromString('--no-allocation-site-pretenuring');
