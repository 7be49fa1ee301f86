import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import { AppError, toAppError } from '../core/errors';
import type { Logger } from '../core/logger';

/**
 * The one place GraphQL turns errors into `errors[]`: AppErrors keep their
 * message with their code; GraphQL's own parse/validation errors pass through; anything else
 * becomes INTERNAL_SERVER_ERROR with its message hidden. Argument values graphql-js refuses are
 * then merged into one `Validation failed` with field errors by argument-errors.ts, which needs the
 * parsed document this function does not get.
 */
export function formatError(log: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = unwrapResolverError(error);
    const code = formatted.extensions?.code;
    if (original instanceof GraphQLError && (!original.originalError || (typeof code === 'string' && REQUEST_ERROR_CODES.has(code)))) {
      // Syntax, validation, variable and HTTP-level errors of the request itself: safe to show.
      // (Apollo wraps graphql-js's own errors, so they arrive with an originalError and its code.)
      // Without a path the error is about the operation as a whole (e.g. "Schema is not configured
      // to execute subscription operation"), which graphql-js raises at execution time uncoded.
      const contractCode = !formatted.path && code === 'INTERNAL_SERVER_ERROR' ? 'BAD_USER_INPUT' : clientCode(code);
      if (contractCode === 'INTERNAL_SERVER_ERROR') {
        // e.g. a non-null field that resolved to null: our fault, and the text names internals.
        log.error({ err: original, path: formatted.path }, 'graphql execution failed');
        return { message: 'Internal server error', locations: formatted.locations, path: formatted.path, extensions: { code: contractCode } };
      }
      return { message: formatted.message, locations: formatted.locations, path: formatted.path, extensions: { code: contractCode } };
    }
    // Errors thrown outside a resolver (e.g. while building the context) arrive wrapped.
    let inner: unknown = original;
    while (inner instanceof GraphQLError && inner.originalError) inner = inner.originalError;
    const appError: AppError = toAppError(inner);
    if (appError.status >= 500 && appError.kind === 'INTERNAL') log.error({ err: original, path: formatted.path }, 'resolver failed');
    const extensions: Record<string, unknown> = { code: appError.code };
    if (appError.errors) extensions.errors = appError.errors;
    if (appError.retryAfter) extensions.retryAfter = appError.retryAfter;
    if (appError.etag) extensions.etag = appError.etag;
    return { message: appError.message, locations: formatted.locations, path: formatted.path, extensions };
  };
}

/** Apollo's codes for a request that could not be parsed, validated or bound to its variables. */
const REQUEST_ERROR_CODES = new Set([
  'GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT', 'BAD_REQUEST', 'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_FOUND', 'PERSISTED_QUERY_NOT_SUPPORTED', 'PERSISTED_QUERY_ONLY',
]);

/** The codes the service answers with; everything Apollo reports about a malformed request is BAD_USER_INPUT. */
const SERVICE_CODES = new Set(['UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND', 'BAD_USER_INPUT', 'TOO_MANY_REQUESTS', 'PRECONDITION_FAILED', 'PRECONDITION_REQUIRED', 'SERVICE_UNAVAILABLE', 'INTERNAL_SERVER_ERROR']);

/** The persisted-document error codes, kept as they are: clients act on them (an APQ link retries with the text). */
const DOCUMENT_CODES = new Set(['PERSISTED_QUERY_NOT_FOUND', 'PERSISTED_QUERY_ONLY']);

function clientCode(code: unknown): string {
  if (code === undefined) return 'BAD_USER_INPUT';
  if (typeof code === 'string' && (SERVICE_CODES.has(code) || DOCUMENT_CODES.has(code))) return code;
  // GRAPHQL_PARSE_FAILED, GRAPHQL_VALIDATION_FAILED, BAD_REQUEST, OPERATION_RESOLUTION_FAILURE,
  // PERSISTED_QUERY_NOT_SUPPORTED: all about what the client sent.
  return 'BAD_USER_INPUT';
}
