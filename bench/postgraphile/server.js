'use strict';
// The GraphQL peer of `npm run bench`: PostGraphile 4 over the same tables, started as its docs
// show for production (library mode in node:http, no query log, no GraphiQL, no schema watching).
// It answers POSTGRAPHILE_POSTS_QUERY (bench/scenarios.ts): the page the service's `posts(page)`
// answers, with authors, comments (with their authors), the comment count and the total. It has
// no soft-delete rule of its own: the query asks for `deletedAt: null` posts.
// Plain JavaScript in a package of its own (see package.json here): it needs graphql 15.
const { createServer } = require('node:http');
const { postgraphile } = require('postgraphile');

const middleware = postgraphile(process.env.DATABASE_URL, 'public', {
  disableQueryLog: true,
  graphiql: false,
  watchPg: false,
  retryOnInitFail: false,
  setofFunctionsContainNulls: false,
  disableDefaultMutations: true,
});

const server = createServer((req, res) => {
  if (req.url === '/readyz') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"status":"ready"}');
    return;
  }
  middleware(req, res);
});
server.keepAliveTimeout = 5000;
server.listen(Number(process.env.PORT || 3002), process.env.HOST || '127.0.0.1');
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeIdleConnections();
});
