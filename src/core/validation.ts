import { z } from 'zod';
import { AppError, type FieldError } from './errors';

/**
 * Parses untrusted input against one zod schema. Both surfaces call it with the same schema
 * (each module's <feature>.inputs.ts), so REST and GraphQL cannot drift apart. Every problem
 * is listed; `field` is null for the body as a whole.
 */
export function parseInput<S extends z.ZodType>(schema: S, data: unknown): z.output<S> {
  if (data instanceof UnreadBody) throw AppError.validation([{ field: null, message: `Body must be JSON sent with content-type: application/json (got ${data.contentType})` }]);
  const result = schema.safeParse(data);
  if (result.success) return result.data;
  const errors: FieldError[] = result.error.issues.map((issue) => ({
    field: issue.path.length ? issue.path.join('.') : null,
    message: issue.message,
  }));
  throw AppError.validation(errors);
}

/**
 * Runs several parsers of one request's input and reports every field problem of all of them
 * in one 422 (every problem listed), e.g. a bad `page` and a bad `author` together.
 */
export function parseAll<T extends unknown[]>(...parsers: { [K in keyof T]: () => T[K] }): T {
  const errors: FieldError[] = [];
  const values = parsers.map((parse) => {
    try {
      return parse();
    } catch (err) {
      if (!(err instanceof AppError) || err.kind !== 'VALIDATION' || !err.errors) throw err;
      errors.push(...err.errors);
      return undefined;
    }
  });
  if (errors.length) throw AppError.validation(errors);
  return values as T;
}

/**
 * What a REST write gets as its body when the request carried one in another content type (or
 * none): not read, and reported as such when the route parses its input, so the caller learns
 * about the header rather than that its object is missing (and authentication still comes first).
 */
export class UnreadBody {
  constructor(readonly contentType: string) {}
}

/** A body must be a JSON object: arrays, strings and null are rejected as a whole. */
export const bodyObject = <T extends z.ZodRawShape>(shape: T) => z.object(shape, { error: 'Body must be a JSON object' });

/**
 * A string whose wrong type says what the field needs: `<label> is required` when it is missing,
 * `<label> must be a string` when it is something else. Only the type issue is worded here; each
 * check names its own message.
 */
export const requiredString = (label: string) =>
  z.string({ error: (issue) => (issue.code !== 'invalid_type' ? undefined : issue.input === undefined ? `${label} is required` : `${label} must be a string`) });

/**
 * For a length check on a string field: zod runs length checks on any value with a `length`, so
 * without it an array would get "must be a string" and a length message both; one message per mistake.
 */
export const onlyStrings = (error: string) => ({ error, when: (payload: { value: unknown }) => typeof payload.value === 'string' });

/** Trimmed string with a length range counted in characters. */
export const text = (label: string, min: number, max: number) =>
  requiredString(label)
    .trim()
    // PostgreSQL text cannot hold U+0000; refuse it here rather than fail in the database.
    .regex(/^[^\u0000]*$/, `${label} must not contain NUL characters`)
    .min(min, onlyStrings(min === 1 ? `${label} is required` : `${label} must be at least ${min} characters`))
    .max(max, onlyStrings(`${label} must be at most ${max} characters`));

/** A positive 32-bit integer given as a string (path and query values). */
export const positiveIntString = /^[1-9]\d{0,9}$/;
export const MAX_INT32 = 2_147_483_647;

export function parsePositiveInt(value: unknown): number | null {
  if (typeof value === 'number') return Number.isInteger(value) && value > 0 && value <= MAX_INT32 ? value : null;
  if (typeof value !== 'string' || !positiveIntString.test(value)) return null;
  const n = Number(value);
  return n <= MAX_INT32 ? n : null;
}

/** Path ids that are not positive 32-bit integers answer the resource's own 404. */
export function parseId(value: unknown, notFoundMessage: string): number {
  const id = parsePositiveInt(value);
  if (id === null) throw AppError.notFound(notFoundMessage);
  return id;
}
