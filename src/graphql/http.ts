import type { Request, RequestHandler, Response } from 'express';
import { HeaderMap, type ApolloServer, type ApolloServerPlugin, type HTTPGraphQLRequest } from '@apollo/server';
import type { GraphQLError, GraphQLFormattedError } from 'graphql';
import type { RequestContext } from '../core/context';
import { anonymous, GRAPHQL_VARY, jsonBody, requestContext, restError, sendNotModified, sendPublic, type HttpSurfaceDeps } from '../core/http';
import { readsOnlyPublicData } from './public-reads';
import type { TrustedDocuments } from './documents';

const JSON_TYPE = 'application/json; charset=utf-8';
const GRAPHQL_RESPONSE_TYPE = 'application/graphql-response+json; charset=utf-8';
/** Apollo's own list, in its order (ApolloServer.ts chooseContentTypeForSingleResultResponse). */
const APOLLO_RESPONSE_TYPES = [JSON_TYPE, GRAPHQL_RESPONSE_TYPE, 'application/json; callbackSpec=1.0; charset=utf-8'];
const GRAPHQL_RESPONSE_TYPES = ['application/json', 'application/graphql-response+json'];

export interface GraphqlHttpDeps extends HttpSurfaceDeps {
  documents: TrustedDocuments;
  /** PUBLIC_CACHE_SECONDS: max-age of an anonymous query's answer by GET. */
  publicCacheSeconds: number;
}

/** What the Apollo plugin below learns of a request and tells the handler, by the request Apollo is given. */
interface HttpState {
  /** The client prefers application/graphql-response+json, so request errors answer 4xx. */
  graphqlResponse: boolean;
  /** Set by the plugin: a query of public data that answered without errors (so a public read when anonymous). */
  cacheable: boolean;
}
const httpStates = new WeakMap<HTTPGraphQLRequest, HttpState>();

/**
 * Whether Apollo will answer application/graphql-response+json: the client's Accept, weighed
 * against Apollo's own list in Apollo's order (so no Accept, or `*\/*`, is application/json).
 */
function prefersGraphqlResponse(req: Request): boolean {
  return req.headers.accept !== undefined && req.accepts(APOLLO_RESPONSE_TYPES) === GRAPHQL_RESPONSE_TYPE;
}

/**
 * GraphQL over HTTP (GET, HEAD and POST /graphql) as an Express handler around Apollo's documented
 * `executeHTTPGraphQLRequest`, as @as-integrations/express5 does, with the context every surface
 * builds (core/http.ts requestContext). The JSON body is parsed by the route's `graphqlBody`.
 *
 * The GraphQL-over-HTTP specification's media types: a client that prefers
 * `application/graphql-response+json` gets it, and a request error (nothing runs: no document,
 * one that does not parse or validate, variables that do not coerce, an unknown or refused
 * persisted document) answers 4xx with `errors` and no `data` (graphqlHttpPlugin below). With
 * `application/json` or no Accept every GraphQL answer is HTTP 200, as it always was here.
 *
 * Trusted documents (graphql/documents.ts) are resolved here, before Apollo sees the request: a
 * `documentId` becomes the manifest's query text, and a refusal is answered without running anything.
 *
 * An anonymous query by GET that asks only for post lists and details (graphql/public-reads.ts)
 * and answers data without errors is a public read (core/http.ts): strong ETag, public
 * Cache-Control, 304 on a matching If-None-Match. Everything else keeps the chain's `no-store`.
 *
 * Apollo behaviours adjusted besides:
 * - a POST body of another content type is left undefined, so Apollo answers its 400 JSON error;
 * - Apollo checks `Accept` only AFTER executing the operation, so a mutation sent with
 *   `Accept: application/xml` would run and still be answered 406: every GraphQL answer is JSON,
 *   so a POST that does not ask for JSON simply gets JSON;
 * - Apollo knows only GET and POST: HEAD is a GET whose body Node leaves out.
 */
export function graphqlHttp(apollo: ApolloServer<RequestContext>, deps: GraphqlHttpDeps): RequestHandler {
  return (req, res) =>
    deps.inFlight.run(async () => {
      const method = req.method === 'HEAD' ? 'GET' : req.method;
      const ctx = requestContext(req, res, deps);
      const headers = new HeaderMap();
      for (const [key, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
      }
      if (method === 'POST' && req.headers.accept !== undefined && !req.accepts(GRAPHQL_RESPONSE_TYPES)) headers.delete('accept');
      const graphqlResponse = prefersGraphqlResponse(req);
      const q = req.url.indexOf('?');
      const httpGraphQLRequest: HTTPGraphQLRequest = { method, headers, search: q < 0 ? '' : req.url.slice(q), body: req.body };

      const refusal = applyDocuments(deps.documents, httpGraphQLRequest);
      if (refusal) return sendGraphqlErrors(res, graphqlResponse, [refusal]);

      // An anonymous query by GET may be a public read; a revalidation of one nothing has changed
      // since is answered 304 before it runs (core/http.ts Revalidation), by its query string and media type.
      const publicRead = method === 'GET' && anonymous(req) && ctx.tenantId === null;
      const page = `${graphqlResponse ? 'graphql-response' : 'json'} ${httpGraphQLRequest.search}`;
      const ifNoneMatch = req.headers['if-none-match'];
      let version: string | undefined;
      if (publicRead && ifNoneMatch && deps.revalidation) {
        const known = await deps.revalidation.check(page, ifNoneMatch);
        if ('notModified' in known) return sendNotModified(res, known.notModified, { seconds: deps.publicCacheSeconds, vary: GRAPHQL_VARY });
        version = known.version;
      }

      const state: HttpState = { graphqlResponse, cacheable: false };
      httpStates.set(httpGraphQLRequest, state);
      const response = await apollo.executeHTTPGraphQLRequest({ httpGraphQLRequest, context: async () => ctx });
      for (const [key, value] of response.headers) res.setHeader(key, value);
      const status = response.status ?? 200;
      if (response.body.kind === 'complete') {
        if (publicRead && status === 200 && state.cacheable) {
          const tag = sendPublic(req, res, { contentType: response.headers.get('content-type') ?? JSON_TYPE, text: response.body.string, seconds: deps.publicCacheSeconds, vary: GRAPHQL_VARY });
          if (version !== undefined) deps.revalidation!.remember(page, tag, version);
          return;
        }
        // Apollo's own hints (its APQ errors say `private, no-cache`) give way to the chain's rule.
        res.setHeader('Cache-Control', 'no-store');
        res.statusCode = status;
        res.setHeader('Content-Length', Buffer.byteLength(response.body.string));
        res.end(response.body.string);
        return;
      }
      res.setHeader('Cache-Control', 'no-store');
      res.statusCode = status;
      for await (const chunk of response.body.asyncIterator) res.write(chunk);
      res.end();
    });
}

/**
 * The JSON body parser of POST /graphql: the REST one (1 MB, JSON types only), whose errors (a
 * body that does not parse, is too large or in an unknown encoding) answer as GraphQL request
 * errors to a client that prefers application/graphql-response+json: the same status, with
 * `errors` and no `data`. For anyone else they stay the REST `{message}` answers they always were.
 */
export const graphqlBody: RequestHandler = (req, res, next) =>
  jsonBody(req, res, (err?: unknown) => {
    if (err === undefined || !prefersGraphqlResponse(req)) return next(err);
    const e = restError(err);
    if (e.status >= 500) return next(err);
    sendGraphqlErrors(res, true, [{ message: e.message, extensions: { code: 'BAD_USER_INPUT' } }], e.status);
  });

/**
 * Resolves trusted documents on the request Apollo will get: a manifest document in place of
 * `documentId` (or of a manifest APQ hash), or the refusal to answer instead.
 */
function applyDocuments(documents: TrustedDocuments, http: HTTPGraphQLRequest): GraphQLFormattedError | undefined {
  if (http.method === 'POST') {
    const body = http.body;
    if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
    const b = body as Record<string, unknown>;
    const r = documents.resolve({ query: b.query, documentId: b.documentId, extensions: b.extensions });
    if (r.kind === 'refused') return refusal(r.error);
    if (r.kind === 'document') {
      const { documentId: _id, ...rest } = b;
      http.body = { ...rest, query: r.query, ...(rest.extensions !== undefined ? { extensions: withoutPersistedQuery(rest.extensions) } : {}) };
    }
    return undefined;
  }
  if (http.method !== 'GET') return undefined;
  // Only a query string that names documents is read twice (here and by Apollo).
  if (!/[?&](documentId|extensions)=/.test(http.search) && !(documents.only && /[?&]query=/.test(http.search))) return undefined;
  const params = new URLSearchParams(http.search);
  const ids = params.getAll('documentId');
  if (ids.length > 1) return { message: "The 'documentId' search parameter may only be specified once.", extensions: { code: 'BAD_USER_INPUT' } };
  let extensions: unknown;
  const rawExtensions = params.getAll('extensions');
  if (rawExtensions.length === 1) {
    try {
      extensions = JSON.parse(rawExtensions[0]);
    } catch {
      // Apollo answers its own 400 for it.
    }
  }
  const r = documents.resolve({ query: params.get('query') ?? undefined, documentId: ids[0], extensions });
  if (r.kind === 'refused') return refusal(r.error);
  if (r.kind === 'document') {
    params.delete('documentId');
    params.set('query', r.query);
    if (extensions !== undefined) params.set('extensions', JSON.stringify(withoutPersistedQuery(extensions)));
    http.search = `?${params.toString()}`;
  }
  return undefined;
}

/** The request's extensions less Apollo's APQ entry: the document is already known, nothing to register. */
function withoutPersistedQuery(extensions: unknown): unknown {
  if (!extensions || typeof extensions !== 'object' || Array.isArray(extensions)) return extensions;
  const { persistedQuery: _pq, ...rest } = extensions as Record<string, unknown>;
  return rest;
}

function refusal(error: GraphQLError): GraphQLFormattedError {
  return { message: error.message, extensions: { code: error.extensions.code } };
}

/** A request error written here (no operation ran): 4xx under graphql-response+json, else 200. */
function sendGraphqlErrors(res: Response, graphqlResponse: boolean, errors: GraphQLFormattedError[], status = 400): void {
  const text = JSON.stringify({ errors });
  res.statusCode = graphqlResponse ? status : 200;
  res.setHeader('Content-Type', graphqlResponse ? GRAPHQL_RESPONSE_TYPE : JSON_TYPE);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/**
 * The HTTP status of every Apollo answer: 200 under application/json (errors are
 * in the body), and under application/graphql-response+json 200 when the operation ran (`data`
 * present, even null, even with errors) and 4xx when it did not (Apollo's own 4xx kept, e.g. 405
 * for a mutation by GET; otherwise 400 by the error's code, or 503/500 should it be the service's
 * own failure).
 * It also tells the handler whether the answer is a cacheable query result.
 */
export const graphqlHttpPlugin: ApolloServerPlugin<RequestContext> = {
  async requestDidStart({ request }) {
    const state = request.http ? httpStates.get(request.http) : undefined;
    return {
      async willSendResponse({ response, operation }) {
        const body = response.body;
        const result = body.kind === 'single' ? body.singleResult : body.initialResult;
        const errors = result.errors;
        if (state?.graphqlResponse && result.data === undefined && errors?.length) {
          const status = response.http.status;
          response.http.status = status !== undefined && status >= 400 && status < 500 ? status : requestErrorStatus(errors);
        } else {
          response.http.status = 200;
        }
        if (state) state.cacheable = body.kind === 'single' && !errors?.length && readsOnlyPublicData(operation);
      },
    };
  },
};

function requestErrorStatus(errors: readonly GraphQLFormattedError[]): number {
  const code = errors[0].extensions?.code;
  return code === 'SERVICE_UNAVAILABLE' ? 503 : code === 'INTERNAL_SERVER_ERROR' ? 500 : 400;
}
