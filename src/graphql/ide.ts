import { dirname, join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../core/errors';

/**
 * GraphiQL on GET /graphql for browsers, from the installed packages only (no CDN, nothing leaves
 * the page's origin). Off in production, where introspection is off too. A GET that carries a
 * `query`, or that does not accept HTML, is a GraphQL request and passes through to Apollo.
 */
const pkg = (name: string) => dirname(require.resolve(name));

const ASSETS: Record<string, { file: string; type: string }> = {
  'react.production.min.js': { file: join(pkg('react'), 'umd', 'react.production.min.js'), type: 'text/javascript' },
  'react-dom.production.min.js': { file: join(pkg('react-dom'), 'umd', 'react-dom.production.min.js'), type: 'text/javascript' },
  'graphiql.min.js': { file: require.resolve('graphiql/graphiql.min.js'), type: 'text/javascript' },
  'graphiql.min.css': { file: join(dirname(require.resolve('graphiql/graphiql.min.js')), 'graphiql.min.css'), type: 'text/css' },
};

export const IDE_ASSET_ROUTE = '/graphql/assets/:file';

// The start script is a file of its own, so a strict Content-Security-Policy (no inline script) fits.
// `#query=` in the address pre-fills the editor: a fragment never reaches the server.
// Subscriptions go over graphql-ws (bundled in GraphiQL's build) to the same path; the Headers
// tab's Authorization and x-tenant-id become the connection's `authorization` and `tenantId`
// as on a WebSocket connection, so one set of headers serves queries and subscriptions alike.
const INIT_JS = `(function () {
  var hash = new URLSearchParams(location.hash.slice(1));
  var wsUrl = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + location.pathname;
  var http = GraphiQL.createFetcher({ url: location.pathname });
  var ws = GraphiQL.createFetcher({ url: location.pathname, subscriptionUrl: wsUrl });
  function isSubscription(opts, name) {
    var defs = (opts && opts.documentAST && opts.documentAST.definitions) || [];
    return defs.some(function (d) {
      return d.kind === 'OperationDefinition' && d.operation === 'subscription' && (!name || (d.name && d.name.value === name) || defs.length === 1);
    });
  }
  function connectionParams(headers) {
    var params = {};
    Object.keys(headers || {}).forEach(function (k) {
      if (k.toLowerCase() === 'authorization') params.authorization = headers[k];
      if (k.toLowerCase() === 'x-tenant-id') params.tenantId = headers[k];
    });
    return params;
  }
  var fetcher = function (params, opts) {
    if (!isSubscription(opts, params.operationName)) return http(params, opts);
    return ws(params, Object.assign({}, opts, { headers: connectionParams(opts && opts.headers) }));
  };
  var props = { fetcher: fetcher, defaultEditorToolsVisibility: true, shouldPersistHeaders: false };
  if (hash.get('query')) props.query = hash.get('query');
  if (hash.get('headers')) props.headers = hash.get('headers');
  ReactDOM.createRoot(document.getElementById('graphiql')).render(React.createElement(GraphiQL, props));
})();
`;

const HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>GraphiQL · Blog API</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/graphql/assets/graphiql.min.css">
  <style>html, body, #graphiql { height: 100%; margin: 0; }</style>
</head>
<body>
  <div id="graphiql">Loading GraphiQL…</div>
  <script src="/graphql/assets/react.production.min.js"></script>
  <script src="/graphql/assets/react-dom.production.min.js"></script>
  <script src="/graphql/assets/graphiql.min.js"></script>
  <script src="/graphql/assets/init.js"></script>
</body>
</html>
`;

/** A browser asking for the page: GET or HEAD, accepting HTML, with no `query` parameter. */
export function wantsIde(req: IncomingMessage): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const q = (req.url ?? '').indexOf('?');
  if (q >= 0 && parseQuery(req.url!.slice(q + 1).split('#')[0]).query !== undefined) return false;
  return (req.headers.accept ?? '').includes('text/html');
}

/** Mounted before Apollo at /graphql; call only outside production. */
export function graphqlIde() {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!wantsIde(req)) return next();
    res.type('html').send(HTML);
  };
}

/** GET /graphql/assets/:file */
export function graphqlIdeAsset(req: Request, res: Response, next: NextFunction) {
  const name = String(req.params.file);
  if (name === 'init.js') {
    res.type('text/javascript').send(INIT_JS);
    return;
  }
  const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
  if (!asset) return next(AppError.notFound('Not found'));
  res.setHeader('Cache-Control', 'public, max-age=86400');
  res.type(asset.type).sendFile(asset.file);
}
