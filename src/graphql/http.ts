import type { IncomingMessage, ServerResponse } from 'node:http';
import { HeaderMap, type ApolloServer } from '@apollo/server';
import type { RequestContext } from '../core/context';
import { queryOf, readJsonBody, requestContext, serve, type RestDeps, type Routed } from '../http/rest';
import { expressView } from '../http/express-view';

const GRAPHQL_PATH = /^\/graphql\/?$/;
const GRAPHQL_RESPONSE_TYPES = ['application/json', 'application/graphql-response+json'];

/**
 * GraphQL over HTTP (GET, HEAD and POST /graphql) on node:http, the way @as-integrations/express5
 * hands a request to Apollo, without Express's per-request work (its router, body-parser chain and
 * res.send were a sixth of a GraphQL page's Node CPU). The front (http/front.ts) has given the
 * request its id, headers, log line and metric. `passOn` names the requests that are not GraphQL
 * operations (the GraphiQL page), which Express serves. Three Apollo behaviours are adjusted:
 * - a POST body of another content type is left undefined, so Apollo answers its 400 JSON error;
 * - Apollo checks `Accept` only AFTER executing the operation, so a mutation sent with
 *   `Accept: application/xml` would run and still be answered 406: every GraphQL answer is JSON,
 *   so a POST that does not ask for JSON simply gets JSON;
 * - Apollo knows only GET and POST: HEAD is a GET whose body Node leaves out.
 */
export function graphqlHttp(apollo: ApolloServer<RequestContext>, deps: RestDeps & { passOn: (req: IncomingMessage) => boolean }) {
  async function run(req: IncomingMessage, res: ServerResponse, routed: Routed): Promise<void> {
    const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
    const body = method === 'POST' ? await readJsonBody(req, res) : undefined;
    const ctx = requestContext(req, routed, deps);
    const headers = new HeaderMap();
    for (const [key, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
    }
    if (method === 'POST' && req.headers.accept !== undefined && !expressView(deps.app, req).accepts(GRAPHQL_RESPONSE_TYPES)) {
      headers.delete('accept');
    }
    const response = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method, headers, search: `?${queryOf(req.url ?? '')}`, body },
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
  }

  return (req: IncomingMessage, res: ServerResponse, routed: Routed): boolean => {
    if (!GRAPHQL_PATH.test(routed.path) || deps.passOn(req)) return false;
    serve(deps, req, res, routed, () => run(req, res, routed));
    return true;
  };
}
