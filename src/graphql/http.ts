import type { RequestHandler } from 'express';
import { HeaderMap, type ApolloServer } from '@apollo/server';
import type { RequestContext } from '../core/context';
import { requestContext, type RestDeps } from '../http/rest';

const GRAPHQL_RESPONSE_TYPES = ['application/json', 'application/graphql-response+json'];

/**
 * GraphQL over HTTP (GET, HEAD and POST /graphql) as an Express handler around Apollo's documented
 * `executeHTTPGraphQLRequest`, as @as-integrations/express5 does, with the context every surface
 * builds (http/rest.ts requestContext). The JSON body is parsed by the route's `jsonBody`. Three
 * Apollo behaviours are adjusted:
 * - a POST body of another content type is left undefined, so Apollo answers its 400 JSON error;
 * - Apollo checks `Accept` only AFTER executing the operation, so a mutation sent with
 *   `Accept: application/xml` would run and still be answered 406: every GraphQL answer is JSON,
 *   so a POST that does not ask for JSON simply gets JSON;
 * - Apollo knows only GET and POST: HEAD is a GET whose body Node leaves out.
 */
export function graphqlHttp(apollo: ApolloServer<RequestContext>, deps: RestDeps): RequestHandler {
  return (req, res) =>
    deps.inFlight.run(async () => {
      const method = req.method === 'HEAD' ? 'GET' : req.method;
      const ctx = requestContext(req, res, deps);
      const headers = new HeaderMap();
      for (const [key, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
      }
      if (method === 'POST' && req.headers.accept !== undefined && !req.accepts(GRAPHQL_RESPONSE_TYPES)) headers.delete('accept');
      const q = req.url.indexOf('?');
      const response = await apollo.executeHTTPGraphQLRequest({
        httpGraphQLRequest: { method, headers, search: q < 0 ? '' : req.url.slice(q), body: req.body },
        context: async () => ctx,
      });
      for (const [key, value] of response.headers) res.setHeader(key, value);
      res.statusCode = response.status ?? 200;
      if (response.body.kind === 'complete') {
        res.setHeader('Content-Length', Buffer.byteLength(response.body.string));
        res.end(response.body.string);
        return;
      }
      for await (const chunk of response.body.asyncIterator) res.write(chunk);
      res.end();
    });
}
