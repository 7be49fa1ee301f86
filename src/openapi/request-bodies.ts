import type { ZodObject } from 'zod';
import { changePasswordInput, forgotPasswordInput, loginInput, MAX_PASSWORD_BYTES, registerInput, resetPasswordInput, updateMeInput } from '../modules/auth/auth.inputs';
import { createCommentInput } from '../modules/comment/comment.inputs';
import { createPostInput, updatePostFields } from '../modules/post/post.inputs';
import { createTenantPostInput } from '../modules/tenant-post/tenant-post.inputs';
import { jsonSchemaOf } from './from-zod';
import type { Schema } from './types';

/**
 * The documented request bodies, derived from the zod inputs the routes parse them with
 * (from-zod.ts), plus what zod hides in refinements and what a reader should know.
 */
const passwordBytes: Schema = {
  // The rule is 8–72 bytes of UTF-8, which JSON Schema cannot count. A code point is 1–4 bytes, so
  // 8 bytes may be 2 characters and 72 bytes at most 72: these bounds never refuse a password the
  // server takes (e.g. `пароль`, 6 letters, 12 bytes), which `minLength: 8` did.
  minLength: 2,
  maxLength: MAX_PASSWORD_BYTES,
  description: `8–${MAX_PASSWORD_BYTES} bytes of UTF-8 (bcrypt reads ${MAX_PASSWORD_BYTES} bytes; longer is rejected, never truncated). ASCII: 8–${MAX_PASSWORD_BYTES} characters.`,
};

type Notes = { description?: string; properties?: Record<string, Schema>; anyOf?: Schema[] };

function body(input: ZodObject, notes: Notes = {}): Schema {
  const schema = jsonSchemaOf(input) as Schema & { properties: Record<string, Schema> };
  for (const [key, extra] of Object.entries(notes.properties ?? {})) {
    if (!schema.properties[key]) throw new Error(`request body note for unknown field ${key}`);
    schema.properties[key] = { ...schema.properties[key], ...extra };
  }
  const out: Schema = notes.anyOf ? { ...schema, anyOf: notes.anyOf } : schema;
  return notes.description ? { ...out, description: notes.description } : out;
}

const trimmed = (what: string) => ({ description: `${what}; counted after trimming` });
const email = { description: 'trimmed and lower-cased; unique case-insensitively' };
const IGNORED = 'Other fields (user_id, published, slug, ...) are ignored.';

/**
 * Component name → the zod input behind it, the schema documented for it and an example body
 * (shown by Swagger UI; test/openapi-examples.test.ts checks zod accepts each).
 */
export const REQUEST_BODIES: Record<string, { input: ZodObject; schema: Schema; example: Record<string, unknown> }> = Object.fromEntries(
  Object.entries({
    RegisterInput: [registerInput, { properties: { name: trimmed('1–255 characters'), email, password: passwordBytes } }, { name: 'Ada', email: 'ada@example.com', password: 'correct horse battery' }],
    LoginInput: [
      loginInput,
      { description: 'Only presence and type are checked (a missing, empty or non-string field is 422): a wrong password of any length is 401.', properties: { email: { description: 'matched case-insensitively' } } },
      { email: 'ada@example.com', password: 'correct horse battery' },
    ],
    ForgotPasswordInput: [forgotPasswordInput, { properties: { email: { description: 'the answer is the same whether or not the email exists' } } }, { email: 'ada@example.com' }],
    ResetPasswordInput: [
      resetPasswordInput,
      { properties: { token: { description: 'the 64-hex secret from the email' }, password: passwordBytes } },
      { token: '5f2b9c0d1e4a7b3c6d8e9f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e', password: 'a new long passphrase' },
    ],
    PostInput: [createPostInput, { description: IGNORED, properties: { title: trimmed('1–255 characters'), body: trimmed('1–100,000 characters') } }, { title: 'Hello, world', body: 'My first post.' }],
    PostEditInput: [
      updatePostFields,
      {
        description: `At least one of title and body (else 422); the slug never changes. ${IGNORED}`,
        properties: { title: trimmed('1–255 characters'), body: trimmed('1–100,000 characters') },
        anyOf: [{ required: ['title'], properties: { title: {} } }, { required: ['body'], properties: { body: {} } }],
      },
      { title: 'Hello again' },
    ],
    UpdateMeInput: [updateMeInput, { properties: { name: trimmed('1–255 characters') } }, { name: 'Ada Lovelace' }],
    ChangePasswordInput: [
      changePasswordInput,
      { properties: { current_password: { description: 'the password now; wrong → 422 `Current password is incorrect`, counted as a failed login' }, password: passwordBytes } },
      { current_password: 'correct horse battery', password: 'a new long passphrase' },
    ],
    CommentInput: [createCommentInput, { properties: { body: trimmed('1–10,000 characters') } }, { body: 'Welcome!' }],
    TenantPostInput: [
      createTenantPostInput,
      { description: '`tenant_id` comes from the header; other fields are ignored.', properties: { title: trimmed('1–255 characters'), body: trimmed('1–100,000 characters') } },
      { title: 'Acme news', body: 'Only tenant 1 sees this.' },
    ],
  } satisfies Record<string, [ZodObject, Notes, Record<string, unknown>]>).map(([name, [input, notes, example]]) => [name, { input, schema: body(input, notes), example }]),
);

export const requestBodySchemas: Record<string, Schema> = Object.fromEntries(Object.entries(REQUEST_BODIES).map(([name, { schema }]) => [name, schema]));
