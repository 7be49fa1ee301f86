import type { ZodTypeAny } from 'zod';
import type { Schema } from './types';

/**
 * JSON Schema for the slice of zod the request inputs use (objects of strings, optional, nullable,
 * booleans, numbers, enums), so the documented request bodies come from the very schemas that
 * validate them and cannot drift. zod-to-json-schema is not installed, and zod 3's own
 * `toJSONSchema` exists only for its v4 API, which the inputs do not use.
 *
 * What zod keeps inside a refinement or transform (e.g. the password's byte length) is invisible
 * here; request-bodies.ts adds it by hand, and test/openapi-inputs.test.ts probes the result
 * against zod. String lengths are zod's, counted after the trimming zod does first.
 * An unsupported zod type throws: a new kind of input must be taught here, not documented wrongly.
 */
export function jsonSchemaOf(schema: ZodTypeAny): Schema {
  const def = schema._def as { typeName: string; [k: string]: unknown };
  switch (def.typeName) {
    case 'ZodObject': {
      const shape = (schema as unknown as { shape: Record<string, ZodTypeAny> }).shape;
      const properties = Object.fromEntries(Object.entries(shape).map(([key, value]) => [key, jsonSchemaOf(value)]));
      const required = Object.keys(shape).filter((key) => !shape[key].isOptional());
      // Unknown fields are dropped, not refused: no additionalProperties: false.
      return { type: 'object', ...(required.length ? { required } : {}), properties };
    }
    case 'ZodString':
      return stringSchema(def.checks as StringCheck[]);
    case 'ZodEffects':
      return jsonSchemaOf(def.schema as ZodTypeAny);
    case 'ZodOptional':
    case 'ZodDefault':
      return jsonSchemaOf(def.innerType as ZodTypeAny);
    case 'ZodNullable':
      return { anyOf: [jsonSchemaOf(def.innerType as ZodTypeAny), { type: 'null' }] };
    case 'ZodBoolean':
      return { type: 'boolean' };
    case 'ZodNumber':
      return { type: (def.checks as { kind: string }[]).some((c) => c.kind === 'int') ? 'integer' : 'number' };
    case 'ZodEnum':
      return { type: 'string', enum: [...(def.values as string[])] };
    default:
      throw new Error(`jsonSchemaOf: ${def.typeName} is not supported`);
  }
}

type StringCheck = { kind: string; value?: number };

function stringSchema(checks: StringCheck[]): Schema {
  const out: Schema = { type: 'string' };
  for (const check of checks) {
    if (check.kind === 'min') out.minLength = Math.max((out.minLength as number | undefined) ?? 0, check.value!);
    else if (check.kind === 'max') out.maxLength = Math.min((out.maxLength as number | undefined) ?? Infinity, check.value!);
    else if (check.kind === 'email') out.format = 'email';
    // trim / toLowerCase change the value, not what is accepted in canonical form; the regexes
    // only refuse U+0000, which would clutter every field of the document for no reader's benefit.
  }
  return out;
}
