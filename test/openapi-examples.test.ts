import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { buildOpenApiDocument } from '../src/openapi/document';
import { INVALID_REQUESTS } from '../src/openapi/operation';
import { REQUEST_BODIES } from '../src/openapi/request-bodies';
import type { Operation, Parameter, Schema } from '../src/openapi/types';
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { buildComment, buildPost } from './support/blog';

/**
 * Every example of /openapi.json (what Swagger UI shows) is true of its own operation: it matches
 * the schema beside it, a request body example is accepted by the zod input behind it, a 422
 * example names only fields of that operation's body or query, and is exactly what a running
 * service answers to the wrong request it was made from.
 */
const doc = buildOpenApiDocument();
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(doc, 'openapi');

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const operations = Object.entries(doc.paths).flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((method) => ({ path, method, op: item[method]! })));
const pointer = (...segments: string[]) => segments.map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');

/** Every `example` under an operation: its responses' and its request body's, with the JSON pointer of the schema beside it. */
const examples = operations.flatMap(({ path, method, op }) => [
  ...Object.entries(op.responses).flatMap(([status, response]) =>
    Object.entries(response.content ?? {})
      .filter(([, media]) => media.example !== undefined)
      .map(([type, media]) => ({ name: `${method.toUpperCase()} ${path} ${status}`, op, status, example: media.example, schema: pointer('paths', path, method, 'responses', status, 'content', type, 'schema') })),
  ),
  ...Object.entries(op.requestBody?.content ?? {})
    .filter(([, media]) => media.example !== undefined)
    .map(([type, media]) => ({ name: `${method.toUpperCase()} ${path} request body`, op, status: 'request', example: media.example, schema: pointer('paths', path, method, 'requestBody', 'content', type, 'schema') })),
]);

const resolve = (schema: Schema): Schema => (schema.$ref ? (doc.components.schemas[String(schema.$ref).split('/').pop()!] as Schema) : schema);
const parameter = (p: Parameter | { $ref: string }): Parameter => ('$ref' in p ? (doc.components.parameters[p.$ref.split('/').pop()!] as Parameter) : p);

/** The fields a 422 of this operation may name: its body's properties and its query parameters. */
function inputFields(op: Operation): string[] {
  const body = op.requestBody ? Object.keys(resolve(op.requestBody.content['application/json'].schema).properties ?? {}) : [];
  const query = (op.parameters ?? []).map(parameter).filter((p) => p.in === 'query').map((p) => p.name);
  return [...body, ...query];
}

const withValidation = operations.filter(({ op }) => op.responses['422']);

describe('the examples of the OpenAPI document', () => {
  it('there are examples, of successes and of errors', () => {
    expect(examples.filter((e) => /^2/.test(e.status)).length).toBeGreaterThan(15);
    expect(examples.filter((e) => e.status === '422').length).toBe(withValidation.length);
    expect(examples.filter((e) => e.status === 'request').length).toBe(operations.filter(({ op }) => op.requestBody && !op.operationId.startsWith('graphql')).length);
  });

  it('each token in an example is a whole JWT a client can send as a header (base64url parts, no `…`)', () => {
    const tokens = [...JSON.stringify(doc).matchAll(/"token":"([^"]*)"/g)].map((m) => m[1]);
    // Every token is header-safe; the access tokens (JWTs) are whole.
    for (const token of tokens) expect(token).toMatch(/^[\x21-\x7e]+$/);
    const jwts = tokens.filter((t) => t.startsWith('eyJ'));
    expect(jwts.length).toBeGreaterThan(0);
    for (const token of jwts) {
      expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
      const [header, payload] = token.split('.').slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')));
      expect(header).toEqual({ alg: 'HS256', typ: 'JWT' });
      expect(payload).toEqual({ id: expect.any(Number), tv: expect.any(Number), iat: expect.any(Number), exp: expect.any(Number) });
    }
  });

  it('each example matches the schema beside it', () => {
    const mismatches = examples.flatMap((e) => {
      const validate = ajv.compile({ $ref: `openapi#/${e.schema}` });
      return validate(e.example) ? [] : [{ example: e.name, errors: validate.errors }];
    });
    expect(mismatches).toEqual([]);
  });

  it('each request body example is accepted by the zod input that parses that body', () => {
    for (const { op } of operations.filter(({ op }) => op.requestBody && !op.operationId.startsWith('graphql'))) {
      const media = op.requestBody!.content['application/json'];
      const name = String(media.schema.$ref).split('/').pop()!;
      expect({ op: op.operationId, accepted: REQUEST_BODIES[name].input.safeParse(media.example).success }).toEqual({ op: op.operationId, accepted: true });
    }
  });

  it.each(withValidation.map(({ op, path, method }) => [op.operationId, { op, path, method }] as const))(
    '%s: the 422 example names fields of this operation only, each message about its field',
    (_id, { op }) => {
      const example = op.responses['422'].content!['application/json'].example as { message: string; errors: { field: string | null; message: string }[] };
      const fields = inputFields(op);
      expect(example.message).toBe('Validation failed');
      expect(example.errors.length).toBeGreaterThan(0);
      for (const error of example.errors) {
        expect({ field: error.field, known: error.field === null || fields.includes(error.field) }).toEqual({ field: error.field, known: true });
        if (error.field) expect(error.message.startsWith(`${error.field} `)).toBe(true);
      }
    },
  );

  it('every operation with a 422 has the wrong request its example answers, and no other operation has one', () => {
    expect([...INVALID_REQUESTS.keys()].sort()).toEqual(withValidation.map(({ op }) => op.operationId).sort());
    for (const { op } of withValidation) {
      expect(op.responses['422'].content!['application/json'].example).toEqual(INVALID_REQUESTS.get(op.operationId)!.answer);
    }
  });
});

describe('each 422 example is what the service answers', () => {
  let app: TestApp;
  let postId: number;
  let commentId: number;
  let token: string;
  beforeAll(async () => {
    app = await startTestApp();
    const admin = await buildUser(app, { role: 'admin' });
    token = admin.token;
    postId = (await buildPost(app, admin.user, { published: true })).id;
    commentId = (await buildComment(app, { id: postId }, admin.user)).id;
  });
  afterAll(() => app.close());

  it.each(withValidation.map(({ op, path, method }) => [op.operationId, { op, path, method }] as const))('%s', async (_id, { op, path, method }) => {
    const wrong = INVALID_REQUESTS.get(op.operationId)!;
    const query = wrong.query ? `?${new URLSearchParams(wrong.query)}` : '';
    // An admin's token and a tenant pass every check that comes before the input's (401, 404, 403).
    const headers: Record<string, string> = { 'x-tenant-id': '1' };
    const res = await clients(app.url).rest(method.toUpperCase(), path.replace('{id}', String(path.startsWith('/comments/') ? commentId : postId)) + query, { body: wrong.body, token, headers });
    expect({ status: res.status, body: res.body }).toEqual({ status: 422, body: op.responses['422'].content!['application/json'].example });
  });
});
