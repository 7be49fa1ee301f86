import { z } from 'zod';
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { buildPost } from './support/blog';
import { asTenant, freshTenant } from './support/tenants';
import { ARGUMENT_RULES } from '../src/graphql/argument-rules';
import { buildGraphqlSchema } from '../src/graphql/schema';

/**
 * Issue 8 / CONTRACT 12: the same bad input through REST and GraphQL gives the same field errors
 * with the same messages, whether graphql-js refuses it (wrong type, null, missing: before any
 * resolver) or the shared zod schema does (empty, too long: in the service).
 */
let app: TestApp;
let api: ReturnType<typeof clients>;
let token: string;
let postId: number;
const tenant = asTenant(freshTenant());

beforeAll(async () => {
  app = await startTestApp();
  api = clients(app.url);
  const owner = await buildUser(app);
  token = owner.token;
  postId = (await buildPost(app, owner.user)).id;
});
afterAll(() => app.close());

type Errors = { field: string | null; message: string }[];
type Input = Record<string, unknown>;
interface Surface {
  rest: (input: Input) => ReturnType<typeof api.rest>;
  gql: (input: Input) => ReturnType<typeof api.gql>;
}

const long = (n: number) => 'x'.repeat(n);

const SURFACES: Record<string, Surface> = {
  register: {
    rest: (body) => api.rest('POST', '/auth/register', { body }),
    gql: (v) => api.gql('mutation($name: String!, $email: String!, $password: String!) { register(name: $name, email: $email, password: $password) { token } }', v),
  },
  login: {
    rest: (body) => api.rest('POST', '/auth/login', { body }),
    gql: (v) => api.gql('mutation($email: String!, $password: String!) { login(email: $email, password: $password) { token } }', v),
  },
  createPost: {
    rest: (body) => api.rest('POST', '/posts', { body, token }),
    gql: (v) => api.gql('mutation($title: String!, $body: String!) { createPost(title: $title, body: $body) { id } }', v, { token }),
  },
  addComment: {
    rest: (body) => api.rest('POST', `/posts/${postId}/comments`, { body, token }),
    gql: (v) => api.gql('mutation($postId: Int!, $body: String!) { addComment(postId: $postId, body: $body) { id } }', { postId, ...v }, { token }),
  },
  createTenantPost: {
    rest: (body) => api.rest('POST', '/tenant/posts', { body, headers: tenant }),
    gql: (v) => api.gql('mutation($title: String!, $body: String!) { createTenantPost(title: $title, body: $body) { id } }', v, { headers: tenant }),
  },
};

const E = 'a@example.test';
const CASES: [op: string, label: string, input: Input, errors: Errors][] = [
  ['register', 'wrong type', { name: 5, email: E, password: 'password123' }, [{ field: 'name', message: 'name must be a string' }]],
  ['register', 'null', { name: 'A', email: null, password: 'password123' }, [{ field: 'email', message: 'email must be a string' }]],
  ['register', 'missing', { name: 'A', email: E }, [{ field: 'password', message: 'password is required' }]],
  ['register', 'empty', { name: ' ', email: '', password: '' }, [
    { field: 'name', message: 'name is required' },
    { field: 'email', message: 'email must be a valid email address' },
    { field: 'password', message: 'password must be at least 8 bytes' },
  ]],
  ['register', 'too long', { name: long(256), email: `${long(250)}@x.test`, password: 'é'.repeat(37) }, [
    { field: 'name', message: 'name must be at most 255 characters' },
    { field: 'email', message: 'email must be at most 255 characters' },
    { field: 'password', message: 'password must be at most 72 bytes (UTF-8)' },
  ]],
  ['register', 'wrong type and empty together', { name: ['A'], email: E, password: '' }, [
    { field: 'name', message: 'name must be a string' },
    { field: 'password', message: 'password must be at least 8 bytes' },
  ]],
  ['login', 'wrong type', { email: 5, password: 'password123' }, [{ field: 'email', message: 'email must be a string' }]],
  ['login', 'null', { email: E, password: null }, [{ field: 'password', message: 'password must be a string' }]],
  ['login', 'missing', {}, [{ field: 'email', message: 'email is required' }, { field: 'password', message: 'password is required' }]],
  ['login', 'empty', { email: ' ', password: '' }, [{ field: 'email', message: 'email is required' }, { field: 'password', message: 'password is required' }]],
  ['login', 'too long', { email: long(256), password: 'password123' }, [{ field: 'email', message: 'email must be at most 255 characters' }]],
  ['createPost', 'wrong type', { title: 5, body: 'b' }, [{ field: 'title', message: 'title must be a string' }]],
  ['createPost', 'null', { title: 't', body: null }, [{ field: 'body', message: 'body must be a string' }]],
  ['createPost', 'missing', { body: 'b' }, [{ field: 'title', message: 'title is required' }]],
  ['createPost', 'empty', { title: '  ', body: '' }, [{ field: 'title', message: 'title is required' }, { field: 'body', message: 'body is required' }]],
  ['createPost', 'too long', { title: long(256), body: long(100_001) }, [
    { field: 'title', message: 'title must be at most 255 characters' },
    { field: 'body', message: 'body must be at most 100000 characters' },
  ]],
  ['createPost', 'wrong type and empty together', { title: true, body: '' }, [{ field: 'title', message: 'title must be a string' }, { field: 'body', message: 'body is required' }]],
  ['addComment', 'wrong type', { body: { text: 'hi' } }, [{ field: 'body', message: 'body must be a string' }]],
  ['addComment', 'null', { body: null }, [{ field: 'body', message: 'body must be a string' }]],
  ['addComment', 'missing', {}, [{ field: 'body', message: 'body is required' }]],
  ['addComment', 'empty', { body: ' ' }, [{ field: 'body', message: 'body is required' }]],
  ['addComment', 'too long', { body: long(10_001) }, [{ field: 'body', message: 'body must be at most 10000 characters' }]],
  ['createTenantPost', 'wrong type', { title: 't', body: 7 }, [{ field: 'body', message: 'body must be a string' }]],
  ['createTenantPost', 'null', { title: null, body: 'b' }, [{ field: 'title', message: 'title must be a string' }]],
  ['createTenantPost', 'missing', {}, [{ field: 'title', message: 'title is required' }, { field: 'body', message: 'body is required' }]],
  ['createTenantPost', 'empty', { title: '', body: ' ' }, [{ field: 'title', message: 'title is required' }, { field: 'body', message: 'body is required' }]],
  ['createTenantPost', 'too long', { title: long(256), body: 'b' }, [{ field: 'title', message: 'title must be at most 255 characters' }]],
];

/** errors[0] of a GraphQL answer, as REST's 422 body plus the code; and there must be no other error. */
function asRest(g: Awaited<ReturnType<typeof api.gql>>) {
  expect(g.data ?? null).toBeNull();
  expect(g.errors).toHaveLength(1);
  const [e] = g.errors!;
  return { code: e.extensions?.code, message: e.message, errors: e.extensions?.errors };
}

describe('the same bad input through REST (422) and GraphQL variables (BAD_USER_INPUT)', () => {
  it.each(CASES)('%s, %s', async (op, _label, input, errors) => {
    const r = await SURFACES[op].rest(input);
    expect({ status: r.status, body: r.body }).toEqual({ status: 422, body: { message: 'Validation failed', errors } });
    expect(asRest(await SURFACES[op].gql(input))).toEqual({ code: 'BAD_USER_INPUT', message: 'Validation failed', errors });
  });
});

describe('literal arguments refused by graphql-js answer like REST too', () => {
  const CREATE = (args: string) => api.gql(`mutation { createPost(${args}) { id } }`, undefined, { token });
  it.each([
    ['wrong type', 'title: 5, body: "b"', { title: 5, body: 'b' }, [{ field: 'title', message: 'title must be a string' }]],
    ['a list for a string, with an empty body', 'title: ["t"], body: ""', { title: ['t'], body: '' }, [{ field: 'title', message: 'title must be a string' }, { field: 'body', message: 'body is required' }]],
    ['null', 'title: null, body: "b"', { title: null, body: 'b' }, [{ field: 'title', message: 'title must be a string' }]],
    ['missing argument', 'body: "b"', { body: 'b' }, [{ field: 'title', message: 'title is required' }]],
    ['no arguments', '', {}, [{ field: 'title', message: 'title is required' }, { field: 'body', message: 'body is required' }]],
  ] as const)('%s', async (_label, args, body, errors) => {
    const r = await api.rest('POST', '/posts', { body, token });
    expect({ status: r.status, body: r.body }).toEqual({ status: 422, body: { message: 'Validation failed', errors } });
    const query = args ? CREATE(args) : api.gql('mutation { createPost { id } }', undefined, { token });
    expect(asRest(await query)).toEqual({ code: 'BAD_USER_INPUT', message: 'Validation failed', errors });
  });
});

describe('arguments without a REST body field get messages from their GraphQL type', () => {
  it.each([
    ['a string postId', 'mutation { addComment(postId: "1", body: "hi") { id } }', undefined, [{ field: 'postId', message: 'postId must be an integer' }]],
    ['a missing postId (variable)', 'mutation($p: Int!) { addComment(postId: $p, body: "hi") { id } }', {}, [{ field: 'postId', message: 'postId is required' }]],
    ['an id beyond 32 bits', 'query($id: Int!) { post(id: $id) { id } }', { id: 2 ** 31 }, [{ field: 'id', message: 'id must be a 32-bit integer' }]],
    ['a direction that is not ASC or DESC', '{ postsCursor(direction: SIDEWAYS) { perPage } }', undefined, [{ field: 'direction', message: 'direction must be one of ASC, DESC' }]],
    // `published` and `author` have a zod rule (the REST query's): its messages come first, then
    // the GraphQL-type ones (zod accepts the string "yes" for published, as REST's query does).
    ['posts filters of the wrong type', '{ posts(published: "yes", author: "x", page: 1.5) { total } }', undefined, [
      { field: 'author', message: 'author must be a positive integer' },
      { field: 'published', message: 'published must be true or false' },
      { field: 'page', message: 'page must be a positive integer' },
    ]],
    // The same input gets REST's message for the same query parameter (GET /posts?page=1.5).
    ['a page that is not an integer', '{ postsSimple(page: 1.5) { hasMore } }', undefined, [{ field: 'page', message: 'page must be a positive integer' }]],
    ['a directive argument', 'query($b: Boolean!) { me @include(if: $b) { id } }', { b: 'yes' }, [{ field: 'if', message: 'if must be true or false' }]],
  ] as const)('%s', async (_label, query, variables, errors) => {
    expect(asRest(await api.gql(query, variables, { token }))).toEqual({ code: 'BAD_USER_INPUT', message: 'Validation failed', errors });
  });

  it('a variable feeding two fields gives one field error (same name, same message); aliases do not rename the field', async () => {
    const g = await api.gql('mutation($t: String!) { a: createPost(title: $t, body: "b") { id } b: createTenantPost(title: $t, body: "b") { id } }', { t: 5 }, { token, headers: tenant });
    expect(asRest(g)).toEqual({ code: 'BAD_USER_INPUT', message: 'Validation failed', errors: [{ field: 'title', message: 'title must be a string' }] });
  });

  it('other request errors are kept, after the validation error', async () => {
    const g = await api.gql('mutation { createPost(title: 5, body: "b") { nope } }', undefined, { token });
    expect(g.errors?.map((e) => [e.message, e.extensions?.code, e.extensions?.errors])).toEqual([
      ['Validation failed', 'BAD_USER_INPUT', [{ field: 'title', message: 'title must be a string' }]],
      ['Cannot query field "nope" on type "Post".', 'BAD_USER_INPUT', undefined],
    ]);
  });

  it('errors that are not about an argument value keep graphql-js text', async () => {
    const unknownArg = await api.gql('mutation { createPost(title: "t", body: "b", userId: 3) { id } }', undefined, { token });
    expect(unknownArg.errors).toEqual([expect.objectContaining({ message: 'Unknown argument "userId" on field "Mutation.createPost".', extensions: { code: 'BAD_USER_INPUT' } })]);
    const wrongVariableType = await api.gql('mutation($t: Int!) { createPost(title: $t, body: "b") { id } }', { t: 1 }, { token });
    expect(wrongVariableType.errors).toEqual([expect.objectContaining({ message: 'Variable "$t" of type "Int!" used in position expecting type "String!".', extensions: { code: 'BAD_USER_INPUT' } })]);
  });

  it('graphql-js checks types before the resolver authenticates: a wrong type is BAD_USER_INPUT even anonymously (REST: 401 first)', async () => {
    expect((await api.rest('POST', '/posts', { body: { title: 5, body: 'b' } })).status).toBe(401);
    expect(asRest(await api.gql('mutation { createPost(title: 5, body: "b") { id } }'))).toEqual({ code: 'BAD_USER_INPUT', message: 'Validation failed', errors: [{ field: 'title', message: 'title must be a string' }] });
  });

  it('no rejected request wrote a post, a comment, a tenant post or a user', async () => {
    const [row] = await app.orm.em.fork().execute<{ posts: string; comments: string; tenant: string; users: string }[]>(
      'select (select count(*) from posts) as posts, (select count(*) from comments) as comments, (select count(*) from tenant_posts) as tenant, (select count(*) from users) as users',
    );
    expect(row).toEqual({ posts: '1', comments: '0', tenant: '0', users: '1' });
  });
});

describe('ARGUMENT_RULES', () => {
  it('names real fields, and every schema key is one of that field’s arguments', async () => {
    const resolved = await buildGraphqlSchema();
    for (const [key, rule] of Object.entries(ARGUMENT_RULES)) {
      const [typeName, fieldName] = key.split('.');
      const type = resolved.getType(typeName) as { getFields?: () => Record<string, { args: { name: string }[] }> } | undefined;
      const field = type?.getFields?.()[fieldName];
      expect({ key, exists: Boolean(field) }).toEqual({ key, exists: true });
      expect(rule).toBeInstanceOf(z.ZodObject);
      const args = field!.args.map((a) => a.name);
      expect({ key, unknown: Object.keys((rule as z.ZodObject).shape).filter((k) => !args.includes(k)) }).toEqual({ key, unknown: [] });
    }
  });
});
