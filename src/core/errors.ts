/**
 * The one error type of the service. Services throw it; each surface maps it once
 * (http/error-handler.ts for REST, graphql/errors.ts for GraphQL) through KINDS below.
 */
export type ErrorKind =
  | 'BAD_REQUEST'
  | 'VALIDATION'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'METHOD_NOT_ALLOWED'
  | 'PAYLOAD_TOO_LARGE'
  | 'RATE_LIMITED'
  | 'PRECONDITION_FAILED'
  | 'PRECONDITION_REQUIRED'
  | 'UNAVAILABLE'
  | 'INTERNAL';

const KINDS: Record<ErrorKind, { status: number; code: string }> = {
  BAD_REQUEST: { status: 400, code: 'BAD_USER_INPUT' },
  VALIDATION: { status: 422, code: 'BAD_USER_INPUT' },
  UNAUTHENTICATED: { status: 401, code: 'UNAUTHENTICATED' },
  FORBIDDEN: { status: 403, code: 'FORBIDDEN' },
  NOT_FOUND: { status: 404, code: 'NOT_FOUND' },
  CONFLICT: { status: 409, code: 'CONFLICT' },
  METHOD_NOT_ALLOWED: { status: 405, code: 'METHOD_NOT_ALLOWED' },
  PAYLOAD_TOO_LARGE: { status: 413, code: 'BAD_USER_INPUT' },
  RATE_LIMITED: { status: 429, code: 'TOO_MANY_REQUESTS' },
  PRECONDITION_FAILED: { status: 412, code: 'PRECONDITION_FAILED' },
  PRECONDITION_REQUIRED: { status: 428, code: 'PRECONDITION_REQUIRED' },
  UNAVAILABLE: { status: 503, code: 'SERVICE_UNAVAILABLE' },
  INTERNAL: { status: 500, code: 'INTERNAL_SERVER_ERROR' },
};

export interface FieldError {
  field: string | null;
  message: string;
}

export class AppError extends Error {
  readonly status: number;
  readonly code: string;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly errors?: FieldError[],
    /** Seconds until a rate-limited caller may try again (REST sends it as Retry-After). */
    readonly retryAfter?: number,
    /** The resource's current strong ETag, on a failed precondition (REST sends it as ETag). */
    readonly etag?: string,
  ) {
    // A 4xx is an answer, not a fault: nobody reads its stack, and V8 captures one by walking the
    // request's whole async chain (a visible share of a 404's CPU in a profile). A 5xx keeps its stack.
    const limit = Error.stackTraceLimit;
    if (KINDS[kind].status < 500) Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'AppError';
    this.status = KINDS[kind].status;
    this.code = KINDS[kind].code;
  }

  static notFound(message: string) {
    return new AppError('NOT_FOUND', message);
  }
  static forbidden() {
    return new AppError('FORBIDDEN', 'Forbidden');
  }
  static unauthenticated(message = 'Unauthenticated') {
    return new AppError('UNAUTHENTICATED', message);
  }
  static badRequest(message: string) {
    return new AppError('BAD_REQUEST', message);
  }
  static validation(errors: FieldError[]) {
    return new AppError('VALIDATION', 'Validation failed', errors);
  }
  /** A 422 about one field with its own message, e.g. `Email already taken`. */
  static conflict(field: string, message: string) {
    return new AppError('VALIDATION', message, [{ field, message }]);
  }
  /** 409: the request collides with one still running (e.g. the same Idempotency-Key). */
  static inConflict(message: string) {
    return new AppError('CONFLICT', message);
  }
  static tooManyRequests(retryAfter: number) {
    return new AppError('RATE_LIMITED', 'Too many requests', undefined, Math.max(1, Math.ceil(retryAfter)));
  }
  /** If-Match named another version of the resource than its current one, `etag`. */
  static preconditionFailed(etag: string) {
    return new AppError('PRECONDITION_FAILED', 'Precondition failed', undefined, undefined, etag);
  }
  static preconditionRequired() {
    return new AppError('PRECONDITION_REQUIRED', 'Precondition required');
  }
  static unavailable() {
    return new AppError('UNAVAILABLE', 'Service unavailable');
  }
}

/**
 * Codes that mean the database could not be reached or dropped us: socket errors from Node
 * (errno codes), and PostgreSQL's SQLSTATEs of class 08 (connection exception), 57P (operator
 * intervention: shutdown, crash recovery, starting up, idle-session timeout), 25P03 (the server
 * ended an idle transaction's session), 53300 (too many connections) and 57014 (a statement
 * cancelled: statement timeout or an administrator's cancel). MikroORM's exceptions copy the
 * driver error's `code`, so a converted error is recognised the same way.
 */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN',
  '57P01', '57P02', '57P03', '57P04', '57P05', '25P03', '53300', '57014', '08000', '08001', '08003', '08004', '08006',
]);
// MikroORM's own exception when it could not open a connection.
const CONNECTION_NAMES = new Set(['ConnectionException']);
// Errors that carry no code at all, so only their wording tells them apart:
// - pg-pool's acquire timeout (every connection busy, or a connection that could not be opened in
//   time), raw or wrapped in a DriverException (test/db-outage.test.ts "a full pool" takes both
//   from the ORM);
// - pg's client-side errors when the socket closed, timed out or broke ("Connection terminated",
//   "Connection ended unexpectedly", "Query read timeout", a client that is no longer queryable)
//   (the ROLLBACK of a transaction whose connection died fails with one of these and replaces the
//   original error, so they are recognised by themselves).
const CONNECTION_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Connection ended unexpectedly|Query read timeout/i;

/** True for errors that mean "the database is not reachable right now", not "the query was wrong". */
export function isConnectionError(err: unknown): boolean {
  let e = err as { code?: unknown; message?: unknown; cause?: unknown; name?: unknown; errors?: unknown } | undefined;
  for (let depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    if (typeof e.code === 'string' && CONNECTION_CODES.has(e.code)) return true;
    if (typeof e.name === 'string' && CONNECTION_NAMES.has(e.name)) return true;
    if (typeof e.message === 'string' && CONNECTION_MESSAGES.test(e.message)) return true;
    // Node reports a refused connection to a host with several addresses as an AggregateError.
    if (Array.isArray(e.errors) && e.errors.some((inner) => isConnectionError(inner))) return true;
    e = e.cause as typeof e;
  }
  return false;
}

/**
 * PostgreSQL refused the values of a write: class 23 (integrity constraint: unique, foreign
 * key, not null, check, exclusion) or class 22 (data exception: a NUL character, a value out
 * of range). Features map the violations they expect (e.g. `Email already taken`) themselves;
 * anything left is still the caller's input, so it is a 422, never a 500 showing SQL.
 */
function isDataViolation(err: unknown): 'constraint' | 'data' | null {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string' || code.length !== 5) return null;
  // A NUL character inside a statement (MikroORM inlines values): "invalid message format".
  if (code === '08P01') return 'data';
  if (code.startsWith('23')) return 'constraint';
  if (code.startsWith('22')) return 'data';
  return null;
}

/**
 * Turns anything thrown into an AppError. ORM and driver errors that a caller can act on get
 * their own kind; everything else is INTERNAL with a message that reveals nothing.
 */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (isConnectionError(err)) return AppError.unavailable();
  const violation = isDataViolation(err);
  if (violation === 'constraint') return AppError.validation([{ field: null, message: 'The request conflicts with existing data' }]);
  if (violation === 'data') return AppError.validation([{ field: null, message: 'The request contains a value that cannot be stored' }]);
  return new AppError('INTERNAL', 'Internal server error');
}

/**
 * PostgreSQL unique violation (23505), optionally on a named constraint. pg's error names the
 * constraint in `constraint`; MikroORM's UniqueConstraintViolationException copies both fields.
 */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: unknown; constraint?: unknown } | undefined;
  return e?.code === '23505' && (!constraint || e.constraint === constraint);
}
