import { GraphQLError, Kind, parse, visit } from 'graphql';
import { documentHash, sha256Hex, type DocumentManifest } from '../config/documents';

/**
 * Trusted documents (persisted queries): the GRAPHQL_DOCUMENTS manifest, read at start
 * (config/documents.ts), and what GRAPHQL_TRUSTED_DOCUMENTS=only allows. Both transports ask
 * this one object: GraphQL over HTTP (graphql/http.ts) before Apollo sees the request, and the
 * WebSocket endpoint (graphql/ws.ts) at each subscribe.
 *
 * - `documentId` (`sha256:<hex>` or `<hex>`) names a manifest document; an id not in it is
 *   PERSISTED_QUERY_NOT_FOUND.
 * - Apollo's automatic persisted queries (`extensions.persistedQuery.sha256Hash` without a query)
 *   look in the manifest first, so a client that sends the manifest's hashes that way (Apollo
 *   Client's persisted query link over the client preset's hashes) works in either mode; other
 *   hashes go on to Apollo's own APQ cache, except in `only` mode.
 * - In `only` mode a query text, an APQ registration (hash and text) and introspection
 *   (`__schema`, `__type`, even in a manifest document) are refused before anything runs with
 *   PERSISTED_QUERY_ONLY. `__typename` is not introspection: generated documents ask for it.
 */
export type TrustedMode = 'off' | 'only';

const PERSISTED_QUERY_NOT_FOUND = 'PERSISTED_QUERY_NOT_FOUND';
const PERSISTED_QUERY_ONLY = 'PERSISTED_QUERY_ONLY';

/** What a request asked for, as far as documents go (HTTP body or query string, or a subscribe payload). */
export interface DocumentRequest {
  query: unknown;
  documentId: unknown;
  extensions: unknown;
}

/** What to run instead, or a refusal, or nothing to change (Apollo handles the request as sent). */
export type Resolution =
  | { kind: 'as-sent' }
  | { kind: 'document'; query: string; id: string }
  | { kind: 'refused'; error: GraphQLError };

export class TrustedDocuments {
  readonly mode: TrustedMode;
  private readonly documents: ReadonlyMap<string, string>;
  /** Manifest ids whose document asks for `__schema` or `__type`. */
  private readonly introspective = new Set<string>();

  constructor(manifest: DocumentManifest | undefined, mode: TrustedMode) {
    this.mode = mode;
    this.documents = manifest?.documents ?? new Map();
    for (const [id, text] of this.documents) if (asksIntrospection(text)) this.introspective.add(id);
  }

  get only(): boolean {
    return this.mode === 'only';
  }

  get size(): number {
    return this.documents.size;
  }

  /** The document a `documentId` or an APQ hash names; undefined when the manifest has none. */
  get(id: string): string | undefined {
    const hex = documentHash(id);
    return hex === null ? undefined : this.documents.get(hex);
  }

  /** The manifest id of this exact text, if the manifest holds it. */
  idOfText(text: string): string | undefined {
    const hex = sha256Hex(text);
    return this.documents.get(hex) === text ? hex : undefined;
  }

  /**
   * Decides a request (see the class comment). `extensions` is the request's parsed extensions
   * object; anything else (a string, an array) is left for Apollo to refuse.
   */
  resolve(req: DocumentRequest): Resolution {
    const hasQuery = typeof req.query === 'string' ? req.query !== '' : req.query !== undefined && req.query !== null;
    if (req.documentId !== undefined && req.documentId !== null) {
      if (typeof req.documentId !== 'string') return refused('`documentId` must be a string', 'BAD_USER_INPUT');
      const id = documentHash(req.documentId);
      const query = id === null ? undefined : this.documents.get(id);
      if (id === null || query === undefined) return refused('Persisted document not found', PERSISTED_QUERY_NOT_FOUND);
      if (hasQuery && req.query !== query) return refused('Send either `query` or `documentId`, not both', 'BAD_USER_INPUT');
      return this.allowed(id, query);
    }
    const apq = persistedQueryOf(req.extensions);
    if (apq && !hasQuery) {
      const id = typeof apq.sha256Hash === 'string' ? documentHash(apq.sha256Hash) : null;
      const query = id === null ? undefined : this.documents.get(id);
      if (id !== null && query !== undefined) return this.allowed(id, query);
      if (this.only) return refused('PersistedQueryNotFound', PERSISTED_QUERY_NOT_FOUND);
      return { kind: 'as-sent' };
    }
    if (this.only && hasQuery) {
      return refused(
        apq ? 'Only trusted documents run here: automatic persisted queries cannot register new documents' : 'Only trusted documents run here: send a `documentId` instead of a query text',
        PERSISTED_QUERY_ONLY,
      );
    }
    return { kind: 'as-sent' };
  }

  /**
   * A subscribe over WebSocket: `extensions.documentId` names a manifest document, and in `only`
   * mode nothing else runs but a manifest document sent as its exact text. The protocol always
   * carries a `query` string, so with a documentId whatever text came with it is ignored.
   */
  resolveSubscribe(payload: { query: string; extensions?: Record<string, unknown> | null }): Resolution {
    const documentId = payload.extensions?.documentId;
    if (documentId !== undefined && documentId !== null) return this.resolve({ query: undefined, documentId, extensions: undefined });
    if (!this.only) return { kind: 'as-sent' };
    const id = this.idOfText(payload.query);
    if (id === undefined) return refused('Only trusted documents run here: name a manifest document by `extensions.documentId` or send its exact text', PERSISTED_QUERY_ONLY);
    return this.allowed(id, payload.query);
  }

  private allowed(id: string, query: string): Resolution {
    if (this.only && this.introspective.has(id)) return refused('Introspection is not allowed: only trusted documents run here', PERSISTED_QUERY_ONLY);
    return { kind: 'document', query, id };
  }
}

function refused(message: string, code: string): Resolution {
  return { kind: 'refused', error: new GraphQLError(message, { extensions: { code } }) };
}

function persistedQueryOf(extensions: unknown): { sha256Hash?: unknown } | undefined {
  if (!extensions || typeof extensions !== 'object' || Array.isArray(extensions)) return undefined;
  const pq = (extensions as { persistedQuery?: unknown }).persistedQuery;
  return pq && typeof pq === 'object' && !Array.isArray(pq) ? pq : undefined;
}

/** Whether a document selects `__schema` or `__type` anywhere (fragments included). */
function asksIntrospection(text: string): boolean {
  let found = false;
  try {
    visit(parse(text), {
      [Kind.FIELD](node) {
        if (node.name.value === '__schema' || node.name.value === '__type') found = true;
      },
    });
  } catch {
    // A manifest document that does not parse is answered its syntax error when asked for.
  }
  return found;
}
