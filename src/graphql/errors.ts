import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import { AppError, toAppError } from '../core/errors';
import type { Logger } from '../core/logger';

/**
 * The one place GraphQL turns errors into `errors[]` (CONTRACT 12): AppErrors keep their
 * message with their code; GraphQL's own parse/validation errors pass through; anything else
 * becomes INTERNAL_SERVER_ERROR with its message hidden.
 */
export function formatError(log: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = unwrapResolverError(error);
    if (original instanceof GraphQLError && !(original.originalError)) {
      // Syntax, validation and variable errors: safe to show, already coded by Apollo.
      const code = (formatted.extensions?.code as string | undefined) ?? 'BAD_USER_INPUT';
      return { message: formatted.message, locations: formatted.locations, path: formatted.path, extensions: { code: code === 'GRAPHQL_VALIDATION_FAILED' || code === 'GRAPHQL_PARSE_FAILED' || code === 'BAD_REQUEST' ? 'BAD_USER_INPUT' : code } };
    }
    const appError: AppError = toAppError(original);
    if (appError.status >= 500 && appError.kind === 'INTERNAL') log.error({ err: original, path: formatted.path }, 'resolver failed');
    const extensions: Record<string, unknown> = { code: appError.code };
    if (appError.errors) extensions.errors = appError.errors;
    if (appError.retryAfter) extensions.retryAfter = appError.retryAfter;
    return { message: appError.message, locations: formatted.locations, path: formatted.path, extensions };
  };
}
