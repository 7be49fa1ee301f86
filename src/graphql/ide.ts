import { dirname } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../core/errors';

/**
 * GraphiQL on GET /graphql for browsers, from the installed packages only (no CDN, nothing leaves
 * the page's origin). Off in production, where introspection is off too. A GET that carries a
 * `query`, or that does not accept HTML, is a GraphQL request and passes through to Apollo.
 *
 * GraphiQL 5 ships ES modules only (React 19 has no browser build either) and edits in Monaco,
 * whose language services run in web workers. So the first request for an asset bundles the page
 * script, its stylesheet and the three workers with esbuild, in memory, once per process.
 */

// The folder whose node_modules holds graphiql: the bundle's bare imports resolve from there.
const ROOT = dirname(dirname(dirname(require.resolve('graphiql/package.json'))));

export const IDE_ASSET_ROUTE = '/graphql/assets/:file';

// Monaco asks for a worker by language; each is a same-origin script (a classic worker), so the
// page's Content-Security-Policy needs no `blob:` for them.
// `#query=` in the address pre-fills the editor: a fragment never reaches the server.
// Subscriptions go over graphql-ws to the same path; the Headers tab's Authorization and
// x-tenant-id become the connection's `authorization` and `tenantId` as on a WebSocket
// connection, so one set of headers serves queries and subscriptions alike.
const ENTRY = `
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import 'graphiql/style.css';

globalThis.MonacoEnvironment = {
  getWorker(_id, label) {
    return new Worker('/graphql/assets/' + (label === 'json' || label === 'graphql' ? label : 'editor') + '.worker.js', { name: label });
  },
};

var hash = new URLSearchParams(location.hash.slice(1));
var wsUrl = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + location.pathname;
var http = createGraphiQLFetcher({ url: location.pathname });
var ws = createGraphiQLFetcher({ url: location.pathname, subscriptionUrl: wsUrl });
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
function fetcher(params, opts) {
  if (!isSubscription(opts, params.operationName)) return http(params, opts);
  return ws(params, Object.assign({}, opts, { headers: connectionParams(opts && opts.headers) }));
}
var props = { fetcher: fetcher, defaultEditorToolsVisibility: true, shouldPersistHeaders: false };
if (hash.get('query')) props.initialQuery = hash.get('query');
if (hash.get('headers')) props.initialHeaders = hash.get('headers');
createRoot(document.getElementById('graphiql')).render(createElement(GraphiQL, props));
`;

const WORKERS: Record<string, string> = {
  'editor.worker.js': 'monaco-editor/esm/vs/editor/editor.worker.js',
  'json.worker.js': 'monaco-editor/esm/vs/language/json/json.worker.js',
  'graphql.worker.js': 'monaco-graphql/esm/graphql.worker.js',
};

const ASSET_NAMES = new Set(['ide.js', 'ide.css', ...Object.keys(WORKERS)]);

type Asset = { body: Uint8Array; type: string };
let bundle: Promise<Map<string, Asset>> | undefined;

/** The page script (ide.js), its stylesheet (ide.css) and Monaco's workers, built on first use. */
function ideBundle(): Promise<Map<string, Asset>> {
  bundle ??= build().catch((err: unknown) => {
    bundle = undefined; // a failed build is tried again on the next request
    throw err;
  });
  return bundle;
}

async function build(): Promise<Map<string, Asset>> {
  const esbuild = await import('esbuild');
  const common = {
    absWorkingDir: ROOT,
    bundle: true,
    minify: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    legalComments: 'none',
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
    // Monaco's icon font: inline, as the page allows fonts from data: only besides its own origin.
    loader: { '.ttf': 'dataurl', '.woff': 'dataurl', '.woff2': 'dataurl' },
  } as const;
  const builds = await Promise.all([
    esbuild.build({ ...common, stdin: { contents: ENTRY, resolveDir: ROOT, sourcefile: 'graphiql-ide.js', loader: 'js' }, outfile: 'ide.js' }),
    ...Object.entries(WORKERS).map(([name, entry]) => esbuild.build({ ...common, entryPoints: [entry], outfile: name })),
  ]);
  const assets = new Map<string, Asset>();
  for (const { outputFiles } of builds) {
    for (const f of outputFiles) {
      const name = f.path.slice(f.path.lastIndexOf('/') + 1);
      assets.set(name, { body: f.contents, type: name.endsWith('.css') ? 'text/css' : 'text/javascript' });
    }
  }
  return assets;
}

const HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>GraphiQL · Blog API</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/graphql/assets/ide.css">
  <style>html, body, #graphiql { height: 100%; margin: 0; }</style>
</head>
<body>
  <div id="graphiql">Loading GraphiQL…</div>
  <script src="/graphql/assets/ide.js"></script>
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
  if (!ASSET_NAMES.has(name)) return next(AppError.notFound('Not found'));
  ideBundle().then(
    (assets) => {
      const asset = assets.get(name);
      if (!asset) return next(AppError.notFound('Not found'));
      res.setHeader('Cache-Control', 'public, max-age=86400');
      res.type(asset.type).send(Buffer.from(asset.body.buffer, asset.body.byteOffset, asset.body.byteLength));
    },
    (err: unknown) => next(err),
  );
}
