import { dirname, join } from 'node:path';
import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../core/errors';
import { onFirstUse } from '../core/lazy';

/**
 * GET /openapi.json and Swagger UI at GET /docs, from the installed swagger-ui-dist (no CDN; the
 * page makes no request outside this origin: the validator badge is off).
 */
// Only the folder: the package's index.js would also run swagger-ui-bundle.js (1.7 MB, meant for
// the browser) in this process, about 11 MB of heap kept for nothing, and V8 sizes the old
// generation as a multiple of what stays alive.
const swaggerDir = dirname(require.resolve('swagger-ui-dist/package.json'));

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css',
  'swagger-ui-bundle.js': 'text/javascript',
  'swagger-ui-standalone-preset.js': 'text/javascript',
  'favicon-32x32.png': 'image/png',
};

export const DOCS_ASSET_ROUTE = '/docs/assets/:file';

const INIT_JS = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  plugins: [SwaggerUIBundle.plugins.DownloadUrl],
  layout: 'StandaloneLayout',
  persistAuthorization: false,
  tryItOutEnabled: false
});
`;

const HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Blog API · OpenAPI</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
  <style>body { margin: 0; } .swagger-ui .topbar { display: none; }</style>
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
  <script src="/docs/assets/init.js"></script>
</body>
</html>
`;

export function openApiHandlers() {
  // Built on the first request for it, not at start: the document's modules and its text (about
  // 1.5 MB of heap) are then held only by a process somebody asked for them.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
  const body = onFirstUse(() => JSON.stringify((require('./document') as typeof import('./document')).buildOpenApiDocument()));
  return {
    document(_req: Request, res: Response) {
      res.type('application/json').send(body());
    },
    page(_req: Request, res: Response) {
      res.type('html').send(HTML);
    },
    asset(req: Request, res: Response, next: NextFunction) {
      const name = String(req.params.file);
      if (name === 'init.js') {
        res.type('text/javascript').send(INIT_JS);
        return;
      }
      if (!Object.hasOwn(ASSETS, name)) return next(AppError.notFound('Not found'));
      res.setHeader('Cache-Control', 'public, max-age=86400');
      res.type(ASSETS[name]).sendFile(join(swaggerDir, name));
    },
  };
}
