import { operation } from './operation';
import { ref, type Paths } from './types';

const status = (value: string) => ({ type: 'object', required: ['status'], properties: { status: { const: value } }, additionalProperties: false });

/** Operational and tooling routes. /metrics and the IDE are for operators and developers. */
export const opsPaths: Paths = {
  '/healthz': {
    get: operation({
      id: 'healthz',
      tag: 'operations',
      summary: 'Liveness: the process is up',
      success: { status: 200, description: 'Up', schema: status('ok'), example: { status: 'ok' } },
    }),
  },
  '/readyz': {
    get: operation({
      id: 'readyz',
      tag: 'operations',
      summary: 'Readiness: the database answers and the process is not draining',
      description: 'With DATABASE_REPLICA_URLS set, `replicas` says which replicas serve reads now and why the others are skipped; a skipped replica does not make the service unready (reads fall back to the primary).',
      success: {
        status: 200,
        description: 'Ready',
        schema: {
          type: 'object',
          required: ['status'],
          properties: {
            status: { const: 'ready' },
            replicas: {
              type: 'object',
              required: ['in_use', 'skipped'],
              properties: {
                in_use: { type: 'array', items: { type: 'string' }, description: 'replica-1, replica-2, ... in the order of DATABASE_REPLICA_URLS' },
                skipped: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['name', 'reason'],
                    properties: { name: { type: 'string' }, reason: { enum: ['down', 'lagging', 'not a standby', 'not checked yet'] } },
                    additionalProperties: false,
                  },
                },
              },
              additionalProperties: false,
            },
          },
          additionalProperties: false,
        },
        example: { status: 'ready', replicas: { in_use: ['replica-1'], skipped: [{ name: 'replica-2', reason: 'lagging' }] } },
      },
      errors: { 503: ['Service unavailable'] },
    }),
  },
  '/metrics': {
    get: operation({
      id: 'metrics',
      tag: 'operations',
      summary: 'Prometheus metrics',
      description: 'HTTP requests by method, route pattern and status; GraphQL operations by name and outcome; database pool; SQL statements per pool (primary, replica-N) and each replica\'s state and lag; process. Keep it off the public internet (scrape it from inside). With METRICS_TOKEN set it answers only `Authorization: Bearer <METRICS_TOKEN>` (401 otherwise); with NODE_ENV=production and no token it is not served (404).',
      success: { status: 200, description: 'Prometheus text exposition format', schema: { type: 'string' }, contentType: 'text/plain' },
      errors: { 401: ['Unauthenticated'], 404: ['Not found'] },
    }),
  },
  '/openapi.json': {
    get: operation({
      id: 'openapi',
      tag: 'operations',
      summary: 'This document',
      success: { status: 200, description: 'OpenAPI 3.1', schema: { type: 'object' } },
    }),
  },
  '/docs': {
    get: operation({
      id: 'docs',
      tag: 'operations',
      summary: 'Swagger UI for this document',
      success: { status: 200, description: 'HTML page (all assets served locally)', schema: { type: 'string' }, contentType: 'text/html' },
    }),
  },
  '/graphql': {
    get: operation({
      id: 'graphqlGet',
      tag: 'graphql',
      auth: 'optional',
      summary: 'GraphQL query over GET (or the GraphiQL IDE for browsers outside production)',
      description:
        'With `query` or `documentId` (and optional `variables`, `operationName`, `extensions`): a GraphQL query. Errors answer 200 with `errors`; ' +
        'a client that prefers `application/graphql-response+json` gets that type, and 400 (405 for a mutation) with `errors` and no `data` when nothing ran. ' +
        'An anonymous query answered without errors is cacheable (ETag, 304). Without `query` and with `Accept: text/html`, outside production: the GraphiQL IDE.',
      params: [
        { name: 'query', in: 'query', description: 'GraphQL document (queries only over GET)', schema: { type: 'string' } },
        { name: 'documentId', in: 'query', description: 'Instead of `query`: `sha256:<hex>` (or `<hex>`) of a document in the trusted documents manifest (GRAPHQL_DOCUMENTS)', schema: { type: 'string' } },
        { name: 'variables', in: 'query', description: 'JSON object', schema: { type: 'string' } },
        { name: 'operationName', in: 'query', schema: { type: 'string' } },
        { name: 'extensions', in: 'query', description: 'JSON object (e.g. `persistedQuery` for automatic persisted queries)', schema: { type: 'string' } },
      ],
      success: { status: 200, description: 'GraphQL response, or the GraphiQL page for browsers', schema: ref('GraphQLResponse'), alsoHtml: true },
      cached: true,
    }),
    post: operation({
      id: 'graphqlPost',
      tag: 'graphql',
      auth: 'optional',
      summary: 'GraphQL query or mutation',
      description:
        'The same operations and rules as REST (see schema/schema.graphql). Errors answer 200 with `errors[0].message` and `extensions.code`; ' +
        'a client that prefers `application/graphql-response+json` gets that type, and 400 (413 for a body over 1 MB) with `errors` and no `data` when nothing ran. ' +
        'Send `documentId` instead of `query` to run a trusted document (GRAPHQL_DOCUMENTS).',
      body: ref('GraphQLRequest'),
      validates: false,
      success: { status: 200, description: 'GraphQL response', schema: ref('GraphQLResponse') },
    }),
  },
};

// Apollo answers malformed GraphQL envelopes itself (400, GraphQL-shaped body): either shape may come.
// Under application/graphql-response+json the 200, 400 and 413 are GraphQL responses of that type.
for (const op of [opsPaths['/graphql'].get!, opsPaths['/graphql'].post!]) {
  const content = op.responses['400'].content!['application/json'];
  content.schema = { anyOf: [content.schema, ref('GraphQLResponse')] };
  for (const status of ['200', '400', '413']) op.responses[status].content!['application/graphql-response+json'] = { schema: ref('GraphQLResponse') };
}
