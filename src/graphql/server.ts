import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
  ApolloServerPluginUsageReportingDisabled,
} from '@apollo/server/plugin/disabled';
import { InMemoryLRUCache } from '@apollo/utils.keyvaluecache';
import { GraphQLError, type DocumentNode, type GraphQLSchema } from 'graphql';
import type { RequestContext } from '../core/context';
import type { Logger } from '../core/logger';
import { argumentErrorsPlugin } from './argument-errors';
import { formatError } from './errors';
import { graphqlHttpPlugin } from './http';
import { limitRules } from './limits';
import { operationLogPlugin } from './operation-log';

export function createApolloServer(schema: GraphQLSchema, opts: { log: Logger; production: boolean; plugins?: ApolloServerPlugin<RequestContext>[] }) {
  return new ApolloServer<RequestContext>({
    schema,
    formatError: formatError(opts.log),
    introspection: !opts.production,
    // With introspection off, "Did you mean ..." suggestions would reveal the schema instead.
    hideSchemaDetailsFromClientErrors: opts.production,
    includeStacktraceInErrorResponses: false,
    validationRules: limitRules,
    // Parsing is linear, but a 1 MB document of tokens is still work nobody legitimate asks for.
    parseOptions: { maxTokens: 5000 },
    // Parsed and validated documents, reused by the next request with the same text: at most
    // about 4 MiB (Apollo's default allows 30), thousands of documents of a real client's size.
    documentStore: new InMemoryLRUCache<DocumentNode>({ maxSize: 4 * 2 ** 20, sizeCalculation: InMemoryLRUCache.sizeCalculation }),
    // One operation per HTTP request: a batch would multiply the cost limit by its length.
    allowBatchedHttpRequests: false,
    // Authentication is by bearer header only, never cookies, so a cross-site request carries no
    // credentials: CSRF prevention would only block plain `GET /graphql?query=`, which the
    // service offers on purpose.
    csrfPrevention: false,
    // main.ts owns the shutdown order (drain HTTP, stop GraphQL, close the ORM, stop PostgreSQL).
    stopOnTerminationSignals: false,
    plugins: [
      // Apollo's own landing pages load from a CDN; the IDE is graphql/ide.ts, from local files.
      ApolloServerPluginLandingPageDisabled(),
      // No cache hints are used; left on, its per-field hook makes Apollo wrap every resolver
      // (about 8% of the CPU of the benchmark's posts query). Cache-Control is graphql/http.ts's.
      ApolloServerPluginCacheControlDisabled(),
      // Nothing is ever reported to Apollo's cloud, whatever APOLLO_KEY the environment holds.
      ApolloServerPluginUsageReportingDisabled(),
      // Inline traces are for federated subgraphs, which this is not; without this line Apollo
      // installs the plugin anyway and it loads Apollo's protobuf reporting code (about 1.5 MB of
      // heap held for nothing).
      ApolloServerPluginInlineTraceDisabled(),
      ...(opts.plugins ?? []),
      // The operation's name and root fields in the request's log line (src/http/logging.ts).
      operationLogPlugin(),
      argumentErrorsPlugin<RequestContext>(opts.log),
      {
        async requestDidStart() {
          return {
            // Apollo would run a subscription's resolver once, as a query field: they live on WebSocket.
            async didResolveOperation({ operation }) {
              if (operation?.operation === 'subscription') {
                throw new GraphQLError('Subscriptions are served over WebSocket (graphql-transport-ws) at /graphql', { extensions: { code: 'BAD_REQUEST' } });
              }
            },
          };
        },
      },
      // HTTP status by media type (200 under application/json, 4xx for request errors under
      // application/graphql-response+json), and what may be cached.
      graphqlHttpPlugin,
    ],
  });
}
