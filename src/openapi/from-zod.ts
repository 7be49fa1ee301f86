import { z } from 'zod';
import type { Schema } from './types';

/**
 * JSON Schema of a request input, from zod's own `z.toJSONSchema`, so the documented request
 * bodies come from the very schemas that validate them and cannot drift.
 *
 * - `io: 'input'`: what a client may send, before zod's transforms (trimming, lower-casing), so a
 *   field with a default is optional and an object says nothing of unknown fields (they are
 *   dropped, not refused: no `additionalProperties: false`).
 * - `target: 'draft-2020-12'`: the JSON Schema dialect of OpenAPI 3.1.
 * - `unrepresentable: 'throw'`: a kind of input JSON Schema cannot say stops the build, rather
 *   than being documented as "anything".
 * - The patterns go: the text fields' only refuse U+0000 and the email one repeats
 *   `format: email`; either would clutter every field of the document for no reader's benefit.
 *
 * What zod keeps inside a refinement or transform (e.g. the password's byte length) is invisible
 * here; request-bodies.ts adds it by hand, and test/openapi-inputs.test.ts probes the result
 * against zod. String lengths are zod's, counted after the trimming zod does first.
 */
export function jsonSchemaOf(schema: z.ZodType): Schema {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'throw',
    override: ({ jsonSchema }) => {
      delete jsonSchema.pattern;
    },
  });
  return json;
}
