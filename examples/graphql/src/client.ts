import { getOperationAST, print, type DocumentNode, type FormattedExecutionResult, type GraphQLFormattedError } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { createClient, type Client } from 'graphql-ws';

/**
 * A small typed GraphQL client for the Blog API over HTTP and WebSocket, for the documents
 * GraphQL Code Generator's client preset wrote in ./gql: a document's result and variables
 * types come with it, so `execute(PostsDocument, { page: 1 })` returns a `PostsQuery`.
 *
 * What it sends for a document:
 * - `send: 'documentId'` (production, trusted documents): only the document's id, the sha256
 *   hex the preset put in `document.__meta__.hash` and in persisted-documents.json. The service
 *   must have loaded that manifest (GRAPHQL_DOCUMENTS); with GRAPHQL_TRUSTED_DOCUMENTS=only it
 *   runs nothing else.
 * - `send: 'query'` (a service without the manifest, or development): the document's text.
 * - `send: 'auto'`: the id first; once the service answers PERSISTED_QUERY_NOT_FOUND (it has no
 *   manifest, as a plain `npm start`), the text from then on. `mode()` says which it settled on.
 *
 * Queries go by GET (public answers can then be cached by the browser or a CDN: ETag and
 * Cache-Control), mutations by POST, subscriptions over graphql-ws on the same URL.
 */

export type DocumentMode = 'documentId' | 'query';

export interface GraphQLClientOptions {
  /** The GraphQL endpoint, e.g. http://localhost:3000/graphql (ws:// is derived from it). */
  url: string;
  send: DocumentMode | 'auto';
}

/** The service refused the operation or it failed: `errors` as the service sent them (message, extensions.code). */
export class GraphQLError extends Error {
  constructor(
    readonly errors: readonly GraphQLFormattedError[],
    readonly status: number,
  ) {
    super(errors.map((e) => `${e.extensions?.code ?? 'ERROR'}: ${e.message}`).join('; '));
    this.name = 'GraphQLError';
  }
}

type Document<TResult, TVariables> = TypedDocumentNode<TResult, TVariables>;

/** The id the client preset embedded in a document (persistedDocuments, hashPropertyName 'hash'). */
export function documentId(document: DocumentNode): string {
  const hash = (document as { __meta__?: { hash?: unknown } }).__meta__?.hash;
  if (typeof hash !== 'string') throw new Error('this document has no id: generate it with the client preset\'s persistedDocuments option (npm run codegen)');
  return hash;
}

function operationOf(document: DocumentNode) {
  const op = getOperationAST(document);
  if (!op) throw new Error('a document with exactly one operation is expected');
  return { type: op.operation, name: op.name?.value };
}

export function createGraphQLClient(options: GraphQLClientOptions) {
  let token: string | undefined;
  // 'auto' sends ids until the service says it does not know them.
  let mode: DocumentMode = options.send === 'auto' ? 'documentId' : options.send;
  let ws: Client | undefined;
  let onConnected: () => void = () => undefined;
  let connected = new Promise<void>((resolve) => (onConnected = resolve));

  /** The request's parameters: the id or the text, then variables and operationName as usual. */
  function params(document: DocumentNode, variables: unknown, name: string | undefined) {
    return {
      ...(mode === 'documentId' ? { documentId: documentId(document) } : { query: print(document) }),
      ...(variables && Object.keys(variables).length ? { variables } : {}),
      ...(name ? { operationName: name } : {}),
    };
  }

  /** The WebSocket connection, opened on the first subscription with the token known then. */
  function socket(): Client {
    return (ws ??= createClient({
      url: options.url.replace(/^http/, 'ws'),
      // Read when the socket opens: a connection is authenticated as whoever the client is then.
      connectionParams: () => (token ? { authorization: `Bearer ${token}` } : {}),
      retryAttempts: 0,
      on: { connected: () => onConnected() },
    }));
  }

  /** One query (GET) or mutation (POST), sent as `mode` says. */
  async function run<TResult, TVariables>(document: Document<TResult, TVariables>, variables: TVariables): Promise<TResult> {
    const { type, name } = operationOf(document);
    if (type === 'subscription') throw new Error('a subscription goes through subscribe()');
    const headers: Record<string, string> = { accept: 'application/graphql-response+json, application/json;q=0.9' };
    if (token) headers.authorization = `Bearer ${token}`;
    const body = params(document, variables, name);
    let res: Response;
    if (type === 'query') {
      const search = new URLSearchParams(Object.entries(body).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
      res = await fetch(`${options.url}?${search}`, { headers });
    } else {
      res = await fetch(options.url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    }
    const result = (await res.json()) as FormattedExecutionResult<TResult>;
    if (result.errors?.length || result.data == null) throw new GraphQLError(result.errors ?? [], res.status);
    return result.data;
  }

  return {
    /** Authenticates the following requests (and the WebSocket connection, when it opens). */
    setToken(value: string | undefined) {
      token = value;
    },

    /** What it sends now (`auto` settles on one at the first operation). */
    mode(): DocumentMode {
      return mode;
    },

    /** Runs a query (GET) or a mutation (POST); resolves with `data`, or throws GraphQLError. */
    async execute<TResult, TVariables>(document: Document<TResult, TVariables>, variables: TVariables): Promise<TResult> {
      try {
        return await run(document, variables);
      } catch (err) {
        const unknownId = err instanceof GraphQLError && err.errors.some((e) => e.extensions?.code === 'PERSISTED_QUERY_NOT_FOUND');
        if (options.send !== 'auto' || mode !== 'documentId' || !unknownId) throw err;
        mode = 'query';
        return run(document, variables);
      }
    },

    /**
     * A subscription's events, typed, until the service completes it or the caller stops
     * iterating (`break`, `return()`). An error message from the service throws GraphQLError.
     *
     * Over WebSocket the id travels as `extensions.documentId` in the subscribe payload, with an
     * empty `query`: graphql-ws requires the field, and the service runs the manifest's document.
     */
    subscribe<TResult, TVariables>(document: Document<TResult, TVariables>, variables: TVariables): AsyncIterableIterator<TResult> {
      const { name } = operationOf(document);
      const payload =
        mode === 'documentId'
          ? { query: '', extensions: { documentId: documentId(document) }, variables: variables as Record<string, unknown>, operationName: name }
          : { query: print(document), variables: variables as Record<string, unknown>, operationName: name };
      const events = socket().iterate<TResult>(payload);
      return {
        [Symbol.asyncIterator]() {
          return this;
        },
        async next() {
          let step: IteratorResult<FormattedExecutionResult<TResult, unknown>>;
          try {
            step = await events.next();
          } catch (err) {
            // A graphql-transport-ws `error` message: the subscribe was refused (its errors as sent).
            if (Array.isArray(err)) throw new GraphQLError(err as GraphQLFormattedError[], 200);
            throw err;
          }
          if (step.done) return { done: true, value: undefined };
          const result = step.value;
          if (result.errors?.length || result.data == null) throw new GraphQLError(result.errors ?? [], 200);
          return { done: false, value: result.data };
        },
        async return() {
          await events.return?.();
          return { done: true, value: undefined };
        },
      };
    },

    /** Resolves once the WebSocket connection is open and the service accepted it (connection_ack). */
    connected(): Promise<void> {
      return connected;
    },

    /** Closes the WebSocket connection, if one was opened. */
    async close() {
      await ws?.dispose();
      ws = undefined;
      connected = new Promise<void>((resolve) => (onConnected = resolve));
    },
  };
}

export type GraphQLClient = ReturnType<typeof createGraphQLClient>;
