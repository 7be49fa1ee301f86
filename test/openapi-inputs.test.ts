import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ZodObject } from 'zod';
import { buildOpenApiDocument } from '../src/openapi/document';
import { REQUEST_BODIES } from '../src/openapi/request-bodies';
import { updatePostInput } from '../src/modules/post/post.inputs';

/**
 * The documented request bodies against the zod inputs that really validate them, probed value by
 * value rather than read from zod's internals: same fields, same required ones, same types, and
 * the same verdict at every documented length boundary. The password's byte rule cannot be said in
 * JSON Schema; there the document must only never refuse what the server accepts.
 */
const doc = buildOpenApiDocument();
const ajv = new Ajv2020({ strict: true, strictTypes: false, allErrors: true });
addFormats(ajv);
const validators = Object.fromEntries(Object.keys(REQUEST_BODIES).map((name) => [name, ajv.compile(doc.components.schemas[name] as object)]));

const VALID: Record<string, Record<string, unknown>> = {
  RegisterInput: { name: 'Ada', email: 'ada@example.com', password: 'password123' },
  LoginInput: { email: 'ada@example.com', password: 'x' },
  ForgotPasswordInput: { email: 'ada@example.com' },
  ResetPasswordInput: { token: 'a'.repeat(64), password: 'password123' },
  PostInput: { title: 'T', body: 'B' },
  CommentInput: { body: 'B' },
  TenantPostInput: { title: 'T', body: 'B' },
  PostEditInput: { title: 'T', body: 'B' },
  UpdateMeInput: { name: 'Ada' },
  ChangePasswordInput: { current_password: 'x', password: 'password123' },
};
/** Fields a body may leave out (an edit sends what changes). */
const OPTIONAL = new Set(['PostEditInput.title', 'PostEditInput.body']);
/** Fields whose length rule counts UTF-8 bytes. */
const BYTE_FIELDS = new Set(['RegisterInput.password', 'ResetPasswordInput.password', 'ChangePasswordInput.password']);

const names = Object.keys(REQUEST_BODIES);
const zodAccepts = (input: ZodObject, value: unknown) => input.safeParse(value).success;
const docAccepts = (name: string, value: unknown) => validators[name](value);
type Props = Record<string, { minLength?: number; maxLength?: number; format?: string }>;
const propsOf = (name: string) => (doc.components.schemas[name] as { properties: Props }).properties;

/** A canonical (trimmed, valid-shaped) string of `n` characters for a property. */
const sample = (format: string | undefined, n: number) => (format === 'email' ? `${'a'.repeat(n - 12)}@example.com` : 'a'.repeat(n));

it('every request body of the document is one of the derived ones, and each has a valid example here', () => {
  const used = new Set(JSON.stringify(doc.paths).match(/#\/components\/schemas\/\w+Input/g)!.map((r) => r.split('/').pop()));
  expect([...used].sort()).toEqual([...names].sort());
  expect(Object.keys(VALID).sort()).toEqual([...names].sort());
  for (const name of names) expect({ name, zod: zodAccepts(REQUEST_BODIES[name].input, VALID[name]), doc: docAccepts(name, VALID[name]) }).toEqual({ name, zod: true, doc: true });
});

describe.each(names)('%s', (name) => {
  const { input } = REQUEST_BODIES[name];
  const props = propsOf(name);

  it('documents exactly the fields zod reads, required exactly where zod requires them', () => {
    expect(Object.keys(props).sort()).toEqual(Object.keys(input.shape).sort());
    for (const key of Object.keys(props)) {
      const { [key]: _dropped, ...without } = VALID[name];
      // Required fields: both refuse the body without it; optional ones (an edit's): both take it.
      expect({ key, doc: docAccepts(name, without) }).toEqual({ key, doc: zodAccepts(input, without) });
      if (!OPTIONAL.has(`${name}.${key}`)) expect({ key, zod: zodAccepts(input, without) }).toEqual({ key, zod: false });
    }
  });

  if (name === 'PostEditInput') {
    it('needs at least one of title and body, as the route does', () => {
      expect({ zod: updatePostInput.safeParse({}).success, doc: docAccepts(name, {}) }).toEqual({ zod: false, doc: false });
      expect(docAccepts(name, { title: 'T' }) && docAccepts(name, { body: 'B' })).toBe(true);
    });
  }

  it('refuses the wrong JSON types zod refuses', () => {
    for (const key of Object.keys(props)) {
      for (const wrong of [12345, null, true, ['x'], { x: 1 }]) {
        const value = { ...VALID[name], [key]: wrong };
        expect({ key, wrong, zod: zodAccepts(input, value), doc: docAccepts(name, value) }).toEqual({ key, wrong, zod: false, doc: false });
      }
    }
  });

  it('agrees with zod on both sides of every documented length, and on lengths zod might limit undocumented', () => {
    for (const [key, p] of Object.entries(props)) {
      if (BYTE_FIELDS.has(`${name}.${key}`)) continue;
      const documented = [p.minLength, p.maxLength].filter((n): n is number => n !== undefined).flatMap((n) => [n - 1, n, n + 1]);
      const lengths = [...documented, 0, 1, 256, 10_001, 100_001];
      for (const n of lengths.filter((n) => n >= 0 && (p.format !== 'email' || n >= 13))) {
        const value = { ...VALID[name], [key]: sample(p.format, n) };
        const zod = zodAccepts(input, value);
        expect({ key, n, doc: docAccepts(name, value) }).toEqual({ key, n, doc: zod });
      }
    }
  });
});

describe.each([...BYTE_FIELDS])('%s (8–72 bytes of UTF-8)', (field) => {
  const [name, key] = field.split('.');
  const { input } = REQUEST_BODIES[name];
  const withPassword = (password: string) => ({ ...VALID[name], [key]: password });

  it('documents 72 as the most and bytes in the description', () => {
    expect(propsOf(name)[key]).toMatchObject({ maxLength: 72, description: expect.stringMatching(/^8–72 bytes of UTF-8/) });
  });

  it.each(['a'.repeat(8), 'a'.repeat(72), 'ü'.repeat(4), '𝄞'.repeat(2), 'пароль', '€'.repeat(24)])('accepts %s on both sides (server: 8–72 bytes)', (password) => {
    expect({ zod: zodAccepts(input, withPassword(password)), doc: docAccepts(name, withPassword(password)) }).toEqual({ zod: true, doc: true });
  });

  it.each(['a', 'a'.repeat(73)])('refuses %s on both sides', (password) => {
    expect({ zod: zodAccepts(input, withPassword(password)), doc: docAccepts(name, withPassword(password)) }).toEqual({ zod: false, doc: false });
  });
});
