import { parseInput } from '../core/validation';
import { rejected, type InvalidRequest } from './examples';
import { REQUEST_BODIES } from './request-bodies';
import { KEY_IN_PROGRESS, KEY_REUSED } from '../modules/idempotency/idempotency.service';
import { paramRef, ref, type Operation, type Parameter, type Response, type Schema } from './types';

const requestIdHeader = { 'x-request-id': { $ref: '#/components/headers/RequestId' } };

const json = (schema: Schema, example?: unknown) => ({ 'application/json': example === undefined ? { schema } : { schema, example } });

/** An error body whose message is one of `messages` (`{message}`; a 422 adds `errors`, its example the operation's own). */
function errorResponse(status: number, messages: string[], invalid?: Invalid): Response {
  const message = { type: 'string', enum: messages };
  const schema: Schema =
    status === 422
      ? { allOf: [ref('ValidationError')], properties: { message } }
      : { allOf: [ref('Error')], properties: { message } };
  const response: Response = {
    description: messages.map((m) => `\`${m}\``).join(', '),
    headers: { ...requestIdHeader },
    content: json(schema, status === 422 ? invalid!.answer : { message: messages[0] }),
  };
  if (status === 412) response.headers!.ETag = { $ref: '#/components/headers/ETag' };
  if (status === 429) response.headers!['Retry-After'] = { description: 'seconds until the caller may try again', schema: { type: 'integer', minimum: 1 } };
  return response;
}

export interface OperationSpec {
  id: string;
  summary: string;
  description?: string;
  tag: string;
  /**
   * true: requires `Authorization: Bearer <token>`; 'optional': anonymous or with a token (the
   * answer depends on who asks); absent: public, a token is not read (`security: []`, so a
   * generator or a mock server tells public from protected).
   */
  auth?: boolean | 'optional';
  params?: (string | Parameter)[];
  body?: Schema;
  /** false when the body is not checked by the service's input rules (GraphQL): no 422. */
  validates?: boolean;
  success: { status: number; description: string; schema: Schema; example?: unknown; contentType?: string; alsoHtml?: boolean };
  /** Status → the messages that status can carry on this operation. */
  errors?: Record<number, string[]>;
  /**
   * A wrong request of this operation, for its 422 example: `{ body }` alone when the body is what
   * is wrong (parsed here by the body's zod input, as the route parses it), or
   * `rejected(request, parse)` with the route's own parsing (examples.ts).
   */
  invalid?: InvalidRequest | Invalid;
  /**
   * A public read (core/http.ts): its 200 carries ETag, Cache-Control and Vary, it takes
   * If-None-Match, and answers 304 without a body when the tag matches.
   */
  cached?: boolean;
  /** Its success answer is one post, comment or user: it carries that JSON's strong ETag. */
  tagged?: boolean;
  /**
   * A write to an existing post, comment or user: takes If-Match (412 with the current ETag when
   * stale; 428 without it under REQUIRE_IF_MATCH).
   */
  conditional?: boolean;
  /**
   * A create that honours an `Idempotency-Key` header: the parameter, the 409 of a repeat still
   * running, the 422 of a key reused for another request, and the replay's marker header.
   */
  idempotent?: boolean;
}

type Invalid = ReturnType<typeof rejected>;

/**
 * Operation id → the wrong request behind its 422 example: test/openapi-examples.test.ts sends
 * each to a running service and expects the example as the answer.
 */
export const INVALID_REQUESTS = new Map<string, Invalid>();

/** The component name of a request body `ref`. */
const bodyName = (body: Schema) => String(body.$ref).split('/').pop()!;

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
  if (spec.tagged || spec.cached) responses[spec.success.status].headers!.ETag = cacheHeaders.ETag;
  if (spec.cached) {
    Object.assign(responses[spec.success.status].headers!, cacheHeaders);
    responses['304'] = {
      description: 'Not modified: the `If-None-Match` tag is the current one (anonymous callers only). No body.',
      headers: { ...requestIdHeader, ...cacheHeaders },
    };
  }
  // An HTML page is another possible answer (GET /graphql shows the IDE to browsers).
  if (spec.success.alsoHtml) responses[spec.success.status].content!['text/html'] = { schema: { type: 'string' } };
  if (spec.idempotent) responses[spec.success.status].headers!['Idempotent-Replayed'] = { $ref: '#/components/headers/IdempotentReplayed' };
  const errors = { ...spec.errors };
  if (spec.conditional) Object.assign(errors, PRECONDITION_ERRORS);
  if (spec.idempotent) {
    errors[409] = [KEY_IN_PROGRESS];
    errors[422] = [...(errors[422] ?? ['Validation failed']), KEY_REUSED];
  }
  // Any request may carry a body, and it is read before the route runs (a 400 comes before 401, 404, 403 and 422).
  errors[400] = [...new Set([...(errors[400] ?? []), ...BODY_400])];
  errors[413] = ['Payload too large'];
  if (spec.body && spec.validates !== false) errors[422] = errors[422] ?? ['Validation failed'];
  let invalid: Invalid | undefined;
  if (errors[422]) {
    if (!spec.invalid) throw new Error(`operation ${spec.id}: a 422 needs \`invalid\`, the wrong request its example answers`);
    invalid = 'answer' in spec.invalid ? spec.invalid : rejected(spec.invalid, (r) => parseInput(REQUEST_BODIES[bodyName(spec.body!)].input, r.body));
    INVALID_REQUESTS.set(spec.id, invalid);
  }
  for (const [status, messages] of Object.entries(errors).sort(([a], [b]) => Number(a) - Number(b))) {
    responses[status] = errorResponse(Number(status), messages, invalid);
  }
  const op: Operation = { operationId: spec.id, summary: spec.summary, tags: [spec.tag], responses };
  if (spec.description) op.description = spec.description;
  op.security = spec.auth === true ? [{ bearerAuth: [] }] : spec.auth === 'optional' ? [{}, { bearerAuth: [] }] : [];
  const params = [...(spec.params ?? []), ...(spec.cached ? ['IfNoneMatch'] : []), ...(spec.conditional ? ['IfMatch'] : []), ...(spec.idempotent ? ['IdempotencyKey'] : [])];
  if (params.length) op.parameters = params.map((p) => (typeof p === 'string' ? paramRef(p) : p));
  if (spec.body) op.requestBody = { required: true, content: json(spec.body, REQUEST_BODIES[bodyName(spec.body)]?.example) };
  return op;
}

const BODY_400 = ['Malformed JSON', 'Malformed request body', 'Unsupported content encoding'];

/** The 401 messages of the authenticate step: no token, a token that fails its checks, a token of a deleted user. */
export const AUTH_401 = ['Unauthenticated', 'Invalid token', 'User not found'];
/** A conditional write's answers to a stale If-Match, and to none under REQUIRE_IF_MATCH. */
const PRECONDITION_ERRORS = { 412: ['Precondition failed'], 428: ['Precondition required'] };
/** Every route that reads the database answers 503 while it is unreachable. */
export const DB_503 = { 503: ['Service unavailable'] };
