import type { GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import { AppError, toAppError } from '../core/errors';
import type { Logger } from '../core/logger';

/** Codes Apollo gives to errors in the request itself (CONTRACT 12 calls them all BAD_USER_INPUT). */
const CLIENT_CODES = new Set(['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT', 'BAD_REQUEST', 'OPERATION_RESOLUTION_FAILURE', 'PERSISTED_QUERY_NOT_FOUND', 'PERSISTED_QUERY_NOT_SUPPORTED']);

/**
 * The one place GraphQL turns errors into `errors[]` (CONTRACT 12): AppErrors keep their
 * message with their code; GraphQL's own parse/validation errors pass through; anything else
 * becomes INTERNAL_SERVER_ERROR with its message hidden.
 */
export function formatError(log: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = unwrapResolverError(error);
    // Syntax, validation, operation and variable errors come from graphql-js/Apollo, not from our
    // code: their messages describe the caller's document and are safe to show.
    const apolloCode = formatted.extensions?.code as string | undefined;
    if (!(original instanceof AppError) && apolloCode && CLIENT_CODES.has(apolloCode)) {
      return { message: formatted.message, locations: formatted.locations, path: formatted.path, extensions: { code: 'BAD_USER_INPUT' } };
    }
    const appError: AppError = toAppError(original);
    if (appError.status >= 500 && appError.kind === 'INTERNAL') log.error({ err: original, path: formatted.path }, 'resolver failed');
    const extensions: Record<string, unknown> = { code: appError.code };
    if (appError.errors) extensions.errors = appError.errors;
    if (appError.retryAfter) extensions.retryAfter = appError.retryAfter;
    return { message: appError.message, locations: formatted.locations, path: formatted.path, extensions };
  };
}
