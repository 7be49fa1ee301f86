import { paramRef, ref, type Operation, type Parameter, type Response, type Schema } from './types';

const requestIdHeader = { 'x-request-id': { $ref: '#/components/headers/RequestId' } };

const json = (schema: Schema, example?: unknown) => ({ 'application/json': example === undefined ? { schema } : { schema, example } });

/** An error body whose message is one of `messages` (CONTRACT 7: `{message}`; 422 adds `errors`). */
function errorResponse(status: number, messages: string[]): Response {
  const message = { type: 'string', enum: messages };
  const schema: Schema =
    status === 422
      ? { allOf: [ref('ValidationError')], properties: { message } }
      : { allOf: [ref('Error')], properties: { message } };
  const response: Response = {
    description: messages.map((m) => `\`${m}\``).join(', '),
    headers: { ...requestIdHeader },
    content: json(schema, status === 422 ? { message: messages[0], errors: [{ field: 'title', message: 'title must be at least 1 character' }] } : { message: messages[0] }),
  };
  if (status === 429) response.headers!['Retry-After'] = { description: 'seconds until the caller may try again', schema: { type: 'integer', minimum: 1 } };
  return response;
}

export interface OperationSpec {
  id: string;
  summary: string;
  description?: string;
  tag: string;
  /** Requires `Authorization: Bearer <token>`. */
  auth?: boolean;
  params?: (string | Parameter)[];
  body?: Schema;
  /** false when the body is not checked by the service's input rules (GraphQL): no 422. */
  validates?: boolean;
  success: { status: number; description: string; schema: Schema; example?: unknown; contentType?: string; alsoHtml?: boolean };
  /** Status → the messages that status can carry on this operation. */
  errors?: Record<number, string[]>;
  /**
   * A public read (http/caching.ts): its 200 carries ETag, Cache-Control and Vary, it takes
   * If-None-Match, and answers 304 without a body when the tag matches.
   */
  cached?: boolean;
}

const cacheHeaders = {
  ETag: { $ref: '#/components/headers/ETag' },
  'Cache-Control': { $ref: '#/components/headers/CacheControl' },
  Vary: { $ref: '#/components/headers/Vary' },
};

/** One documented operation: its success answer, every error with its messages, and the request id header. */
export function operation(spec: OperationSpec): Operation {
  const responses: Record<string, Response> = {
    [spec.success.status]: {
      description: spec.success.description,
      headers: { ...requestIdHeader },
      content: spec.success.contentType
        ? { [spec.success.contentType]: { schema: spec.success.schema } }
        : json(spec.success.schema, spec.success.example),
    },
  };
  if (spec.cached) {
    Object.assign(responses[spec.success.status].headers!, cacheHeaders);
    responses['304'] = {
      description: 'Not modified: the `If-None-Match` tag is the current one (anonymous callers only). No body.',
      headers: { ...requestIdHeader, ...cacheHeaders },
    };
  }
  // An HTML page is another possible answer (GET /graphql shows the IDE to browsers).
  if (spec.success.alsoHtml) responses[spec.success.status].content!['text/html'] = { schema: { type: 'string' } };
  const errors = { ...spec.errors };
  // Any request may carry a body, and it is read before the route runs (CONTRACT 7 precedence).
  errors[400] = [...new Set([...(errors[400] ?? []), ...BODY_400])];
  errors[413] = ['Payload too large'];
  if (spec.body && spec.validates !== false) errors[422] = errors[422] ?? ['Validation failed'];
  for (const [status, messages] of Object.entries(errors).sort(([a], [b]) => Number(a) - Number(b))) {
    responses[status] = errorResponse(Number(status), messages);
  }
  const op: Operation = { operationId: spec.id, summary: spec.summary, tags: [spec.tag], responses };
  if (spec.description) op.description = spec.description;
  if (spec.auth) op.security = [{ bearerAuth: [] }];
  const params = spec.cached ? [...(spec.params ?? []), 'IfNoneMatch'] : spec.params;
  if (params?.length) op.parameters = params.map((p) => (typeof p === 'string' ? paramRef(p) : p));
  if (spec.body) op.requestBody = { required: true, content: json(spec.body) };
  return op;
}

const BODY_400 = ['Malformed JSON', 'Malformed request body', 'Unsupported content encoding'];

/** The 401 messages of the authenticate step (SPEC 5.2). */
export const AUTH_401 = ['Unauthenticated', 'Invalid token', 'User not found'];
/** Every route that reads the database answers 503 while it is unreachable. */
export const DB_503 = { 503: ['Service unavailable'] };
