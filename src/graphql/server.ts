import { ApolloServer } from '@apollo/server';
import type { GraphQLSchema } from 'graphql';
import type { RequestContext } from '../core/context';
import type { Logger } from '../core/logger';
import { formatError } from './errors';
import { limitRules } from './limits';

export function createApolloServer(schema: GraphQLSchema, opts: { log: Logger; production: boolean }) {
  return new ApolloServer<RequestContext>({
    schema,
    formatError: formatError(opts.log),
    introspection: !opts.production,
    // Without introspection, "Did you mean ...?" suggestions would still spell the schema out.
    hideSchemaDetailsFromClientErrors: opts.production,
    includeStacktraceInErrorResponses: false,
    validationRules: limitRules,
    // Parsing is linear, but a 1 MB document of tokens is still work nobody legitimate asks for.
    parseOptions: { maxTokens: 5000 },
    // One operation per HTTP request: a batch would multiply the cost limit by its length.
    allowBatchedHttpRequests: false,
    // Authentication is by bearer header only, never cookies, so a cross-site request carries no
    // credentials: CSRF prevention would only block plain `GET /graphql?query=` (CONTRACT 1).
    csrfPrevention: false,
    // main.ts owns the shutdown order (drain HTTP, stop GraphQL, close the ORM, stop PostgreSQL).
    stopOnTerminationSignals: false,
    plugins: [
      {
        // CONTRACT 1: GraphQL errors answer HTTP 200 with `errors`, whatever their kind.
        async requestDidStart() {
          return {
            async willSendResponse({ response }) {
              response.http.status = 200;
            },
          };
        },
      },
    ],
  });
}
