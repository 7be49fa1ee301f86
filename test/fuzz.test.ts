import fc from 'fast-check';
import jwt from 'jsonwebtoken';
import { Client } from 'pg';
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  isInterfaceType,
  isScalarType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLOutputType,
} from 'graphql';
import { startTestApp, type TestApp } from './support/harness';
import { buildUser } from './support/factories';
import { restRoutes } from '../src/modules';
import { buildGraphqlSchema } from '../src/graphql/schema';
import type { RouteDef } from '../src/http/routes';

/**
 * Generated junk against EVERY REST route of the route table and EVERY Query/Mutation field of
 * the schema, so routes and operations added later are fuzzed without touching this file.
 * Asserted for each answer: no 5xx; JSON; a string `message` (REST) or `errors[].message`
 * (GraphQL) on errors; no stack trace or SQL; and a rejected request changed no table.
 * Phase 1 sends no valid token (only junk authorization), phase 2 valid tokens of each role.
 */
jest.setTimeout(120_000);

const CONTRACT_CODES = ['UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND', 'BAD_USER_INPUT', 'TOO_MANY_REQUESTS', 'SERVICE_UNAVAILABLE'];
/** Stack frames and SQL that must never reach a client. */
const LEAK = /\n\s*at |\bat [\w.<>]+ \(|\bselect\s|\binsert\s|\bupdate\s+"|\bdelete\s+from|violates|constraint|duplicate key|syntax error at|relation "|column "|mikro|knex|node_modules|\.ts:\d/i;
/** Tables that record attempts by design (failed logins) or that background jobs change. */
const UNWATCHED = new Set(['rate_limits', 'rate_attempts', 'mikro_orm_migrations']);
/** Only inserts are compared: the mail job updates (and may clean up) rows on its own. */
const INSERT_ONLY = new Set(['mail_outbox']);

/** Total requests per phase and surface, spread over the routes/fields that exist. */
const REST_BUDGET = 700;
const GQL_BUDGET = 450;
const runsFor = (budget: number, n: number) => Math.min(300, Math.max(20, Math.ceil(budget / Math.max(1, n))));

let app: TestApp;
let db: Client;
let routes: RouteDef[];
let tables: string[];
const ids = { users: [] as number[], posts: [] as number[], comments: [] as number[], tenantPosts: [] as number[] };
let tokens: string[] = [];

beforeAll(async () => {
  app = await startTestApp();
  routes = [
    ...restRoutes(app.built.services),
    { method: 'get', path: '/healthz', handler: () => undefined },
    { method: 'get', path: '/readyz', handler: () => undefined },
  ];
  db = new Client({ connectionString: app.databaseUrl });
  await db.connect();
  const built = await Promise.all((['user', 'moderator', 'admin'] as const).map((role) => buildUser(app, { role, name: `Fuzz ${role}` })));
  tokens = built.map((b) => b.token);
  ids.users = built.map((b) => b.user.id);
  // Rows for the path ids to hit, straight in SQL so this file needs no feature's factory.
  for (const [i, userId] of ids.users.entries()) {
    const post = await db.query(
      `insert into posts (created_at, updated_at, user_id, title, slug, body, published, published_at, deleted_at)
       values (now(), now(), $1, $2, $3, 'Body', $4, case when $4 then now() end, case when $5 then now() end) returning id`,
      [userId, `Fuzz post ${i}`, `fuzz-post-${i}`, i % 2 === 0, i === 2],
    );
    ids.posts.push(post.rows[0].id);
    const comment = await db.query(
      `insert into comments (created_at, updated_at, post_id, user_id, body) values (now(), now(), $1, $2, 'Comment') returning id`,
      [post.rows[0].id, userId],
    );
    ids.comments.push(comment.rows[0].id);
    const tp = await db.query(
      `insert into tenant_posts (created_at, updated_at, tenant_id, title, body) values (now(), now(), $1, 'T', 'B') returning id`,
      [i + 1],
    );
    ids.tenantPosts.push(tp.rows[0].id);
  }
  const res = await db.query(`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1`);
  tables = res.rows.map((r) => r.table_name as string).filter((t) => !UNWATCHED.has(t));
});

afterAll(async () => {
  await db?.end();
  await app?.close();
});

/** What a rejected request must not change: content hashes, or the highest id for INSERT_ONLY tables. */
async function snapshot(): Promise<Record<string, string>> {
  const parts = tables.map((t) =>
    INSERT_ONLY.has(t)
      ? `select '${t}' as t, coalesce(max(id), 0)::text as v from "${t}"`
      : `select '${t}' as t, count(*) || ':' || md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as v from "${t}" x`,
  );
  const res = await db.query(parts.join(' union all '));
  return Object.fromEntries(res.rows.map((r) => [r.t, r.v]));
}

// ---------- generators ----------

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 });
const nastyString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('', ' ', '\u0000', 'a\u0000b', '\ud800', '💥'.repeat(100), '<script>alert(1)</script>', "' or 1=1 --", '%00', '../../etc/passwd', 'null', 'undefined', 'NaN', '0', '-1', '1e309', '__proto__', 'constructor'),
  fc.constantFrom(73, 256, 10_001, 100_001).map((n) => 'x'.repeat(n)),
  fc.emailAddress(),
  fc.tuple(fc.emailAddress(), fc.constantFrom('', ' ', '\u0000', 'ÄÖ')).map(([e, s]) => s + e.toUpperCase() + s),
);
const nastyNumber = fc.oneof(
  fc.integer(),
  fc.constantFrom(0, -1, 1, 2, 3, 2_147_483_647, 2_147_483_648, -2_147_483_649, Number.MAX_SAFE_INTEGER, 1e21, 0.5, -0),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const jsonish: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: nastyString },
  { weight: 2, arbitrary: nastyNumber },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 1, arbitrary: fc.array(nastyString, { maxLength: 3 }) },
);
const FIELDS = ['name', 'email', 'password', 'title', 'body', 'token', 'id', 'role', 'user_id', 'userId', 'published', 'tenant_id', 'post_id', 'postId', 'deleted_at', 'count', '__proto__'];
const plausibleBody = fc.dictionary(fc.oneof(fc.constantFrom(...FIELDS), fc.string({ maxLength: 8 })), jsonish, { maxKeys: 6 });

/** The body as text: mostly JSON (objects, other values), sometimes broken JSON. */
const bodyText = fc.oneof(
  { weight: 6, arbitrary: plausibleBody.map((b) => JSON.stringify(b)) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom('', '{', '[', '{"a":}', '{"name":"x",}', 'null', '""', '[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]', '{"a":' + '['.repeat(3000)) },
);
const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  { weight: 1, arbitrary: fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/merge-patch+json', 'application/json; charset=utf-16', 'multipart/form-data', '') },
);

function pathParam(kind: 'real' | 'any'): fc.Arbitrary<string> {
  const real = fc.constantFrom(...[...ids.users, ...ids.posts, ...ids.comments, ...ids.tenantPosts].map(String));
  const junk = fc.oneof(
    fc.constantFrom('0', '-1', '01', '1.0', '1e3', '2147483647', '2147483648', '99999999999999999999', ' 1', 'abc', 'null', '%E0%A4%A', '%', '%zz', '%2F', '%00', '..', '1;drop'),
    nastyNumber.map(String),
    fc.string({ maxLength: 12 }).map(encodeURIComponent),
  );
  return kind === 'real' ? fc.oneof({ weight: 3, arbitrary: real }, { weight: 2, arbitrary: junk }) : junk;
}

const queryString = fc
  .array(
    fc.tuple(
      fc.oneof(fc.constantFrom('page', 'paginate', 'cursor', 'direction', 'published', 'author', 'per_page', 'q'), fc.string({ maxLength: 6 })),
      fc.oneof(fc.constantFrom('1', '2', '0', '-1', 'page', 'simple', 'cursor', 'asc', 'desc', 'true', 'yes', 'off', 'maybe', '', 'eyJpZCI6MX0', '%E0%A4%A'), fc.string({ maxLength: 12 })),
    ),
    { maxLength: 6 },
  )
  .map((pairs) => (pairs.length ? '?' + pairs.map(([k, v]) => `${encodeURIComponent(k)}=${v.startsWith('%') ? v : encodeURIComponent(v)}`).join('&') : ''));

const SECRET = 'test-secret-that-is-at-least-32-characters-long';
const junkAuthorization = fc.oneof(
  printable,
  printable.map((s) => `Bearer ${s}`),
  fc.constantFrom('Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'bearer a.b.c', 'Bearer a.b.c', 'Bearer ..', 'Bearer eyJhbGciOiJub25lIn0.eyJpZCI6MX0.'),
  // Signed with the right secret but a payload no access token has.
  // (Small values: past 16 KB of headers Node itself answers 431 before the app; edges.test.ts covers that.)
  fc.dictionary(fc.constantFrom('id', 'tv', 'purpose', 'exp', 'sub'), fc.oneof(nastyNumber, fc.string({ maxLength: 20 }), fc.boolean(), fc.constant(null), fc.jsonValue({ maxDepth: 1 })), { maxKeys: 3 }).map(
    (payload) => `Bearer ${jwt.sign({ ...payload, exp: typeof payload.exp === 'number' && Number.isFinite(payload.exp) ? payload.exp : Math.floor(Date.now() / 1000) + 60 }, SECRET, { algorithm: 'HS256', noTimestamp: true })}`,
  ),
  fc.record({ id: nastyNumber }).map((p) => `Bearer ${jwt.sign(p, 'a-different-secret-of-sufficient-length!!', { algorithm: 'HS256' })}`),
);
const junkTenant = fc.oneof(printable, nastyNumber.map(String), fc.constantFrom('1', '2', '0', '-1', '1.5', '2147483648', ' 1 ', '1,2'));
const headers = (phase: 'anonymous' | 'authenticated') =>
  fc.record(
    {
      authorization: phase === 'authenticated' ? fc.constantFrom(...tokens).map((t) => `Bearer ${t}`) : junkAuthorization,
      'x-tenant-id': junkTenant,
      accept: fc.constantFrom('application/json', '*/*', 'text/html', 'application/xml', 'garbage'),
      'x-request-id': printable,
    },
    { requiredKeys: phase === 'authenticated' ? ['authorization'] : [] },
  );

// ---------- checks ----------

interface Sent {
  status: number;
  contentType: string | null;
  text: string;
}

function checkRest(label: string, r: Sent): { ok: boolean } {
  expect({ label, status: r.status < 500 }).toEqual({ label, status: true });
  if (r.status === 204 || r.status === 304) return { ok: true };
  expect({ label, contentType: r.contentType }).toEqual({ label, contentType: expect.stringMatching(/^application\/json/) });
  const body = JSON.parse(r.text);
  const ok = r.status < 400;
  if (!ok) {
    expect({ label, message: typeof body.message }).toEqual({ label, message: 'string' });
    expect({ label, text: LEAK.test(r.text) ? r.text : 'clean' }).toEqual({ label, text: 'clean' });
    if (r.status === 422) expect(Array.isArray(body.errors)).toBe(true);
  }
  return { ok };
}

async function send(method: string, path: string, init: { headers: Record<string, string>; body?: string }): Promise<Sent> {
  const h = Object.fromEntries(Object.entries(init.headers).filter(([, v]) => v !== ''));
  const res = await fetch(app.url + path, { method, headers: h, body: method === 'GET' || method === 'HEAD' ? undefined : init.body });
  return { status: res.status, contentType: res.headers.get('content-type'), text: await res.text() };
}

/**
 * One request; a rejected one (any 4xx) must leave every watched table as it was. Tables are
 * compared around requests that may write (not GET, GraphQL mutations), which keeps the file fast.
 */
async function probeUnchanged(label: string, mayWrite: boolean, run: () => Promise<Sent>, check: (r: Sent) => { ok: boolean }) {
  if (!mayWrite) return void check(await run());
  const before = await snapshot();
  const r = await run();
  const { ok } = check(r);
  if (!ok) expect({ label, tables: await snapshot() }).toEqual({ label, tables: before });
}

// ---------- REST ----------

describe.each(['anonymous', 'authenticated'] as const)('REST fuzz (%s)', (phase) => {
  it('every route: never 5xx, always JSON with a message, no leaks, rejected requests write nothing', async () => {
    const runs = runsFor(REST_BUDGET, routes.length);
    for (const route of routes) {
      const params = (route.path.match(/:\w+/g) ?? []).length;
      await fc.assert(
        fc.asyncProperty(
          fc.array(pathParam(phase === 'authenticated' ? 'real' : 'any'), { minLength: params, maxLength: params }),
          queryString,
          bodyText,
          contentType,
          headers(phase),
          fc.oneof({ weight: 9, arbitrary: fc.constant(route.method.toUpperCase()) }, { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE') }),
          async (values, qs, body, type, hdrs, method) => {
            let i = 0;
            const path = route.path.replace(/:\w+/g, () => values[i++]) + qs;
            const label = `${method} ${path}`;
            await probeUnchanged(label, method !== 'GET', () => send(method, path, { headers: { ...hdrs, 'content-type': type }, body }), (r) => checkRest(label, r));
          },
        ),
        { numRuns: runs },
      );
    }
  });
});

// ---------- GraphQL ----------

function varType(t: GraphQLInputType): string {
  return String(t);
}

function valueFor(t: GraphQLInputType, depth = 0): fc.Arbitrary<unknown> {
  const anything = fc.oneof(jsonish, fc.constant(undefined));
  if (isNonNullType(t)) return fc.oneof({ weight: 9, arbitrary: valueFor(t.ofType, depth) }, { weight: 1, arbitrary: fc.constantFrom(null, undefined) });
  let typed: fc.Arbitrary<unknown>;
  if (isListType(t)) typed = fc.array(valueFor(t.ofType, depth + 1), { maxLength: 3 });
  else if (isEnumType(t)) typed = fc.constantFrom(...t.getValues().map((v) => v.name));
  else if (isInputObjectType(t) && depth < 3) {
    const fields = Object.values(t.getFields());
    typed = fc.record(Object.fromEntries(fields.map((f) => [f.name, valueFor(f.type, depth + 1)])), { requiredKeys: [] });
  } else if (isScalarType(t) && (t.name === 'Int' || t.name === 'Float')) {
    typed = fc.oneof(nastyNumber, fc.constantFrom(...[...ids.users, ...ids.posts, ...ids.comments, ...ids.tenantPosts]));
  } else if (isScalarType(t) && t.name === 'Boolean') typed = fc.boolean();
  else typed = nastyString;
  return fc.oneof({ weight: 3, arbitrary: typed }, { weight: 1, arbitrary: anything });
}

/** Every field of an output type that takes no required argument, nested a few levels. */
function selection(t: GraphQLOutputType, depth: number): string {
  const named = getNamedType(t);
  if (isLeafType(named)) return '';
  if (!(isObjectType(named) || isInterfaceType(named)) || depth >= 3) return '{ __typename }';
  const parts = ['__typename'];
  for (const f of Object.values(named.getFields())) {
    if (f.args.some((a) => isNonNullType(a.type) && a.defaultValue === undefined)) continue;
    const sub = selection(f.type, depth + 1);
    parts.push(sub ? `${f.name} ${sub}` : f.name);
  }
  return `{ ${parts.join(' ')} }`;
}

function operationFor(kind: 'query' | 'mutation', field: GraphQLField<unknown, unknown>): string {
  const defs = field.args.map((a) => `$${a.name}: ${varType(a.type)}`).join(', ');
  const args = field.args.map((a) => `${a.name}: $${a.name}`).join(', ');
  return `${kind} Fuzz${defs ? `(${defs})` : ''} { ${field.name}${args ? `(${args})` : ''} ${selection(field.type, 0)} }`;
}

function checkGql(label: string, r: Sent): { ok: boolean } {
  expect({ label, status: r.status < 500 }).toEqual({ label, status: true });
  expect({ label, contentType: r.contentType }).toEqual({ label, contentType: expect.stringMatching(/^application\/(graphql-response\+)?json/) });
  const body = JSON.parse(r.text) as { data?: unknown; errors?: { message: unknown; extensions?: { code?: unknown } }[] };
  if (!body.errors) return { ok: true };
  for (const e of body.errors) {
    expect({ label, message: typeof e.message }).toEqual({ label, message: 'string' });
    expect({ label, code: CONTRACT_CODES.includes(e.extensions?.code as string) ? 'contract' : e.extensions?.code }).toEqual({ label, code: 'contract' });
  }
  expect({ label, text: LEAK.test(r.text) ? r.text : 'clean' }).toEqual({ label, text: 'clean' });
  return { ok: false };
}

describe.each(['anonymous', 'authenticated'] as const)('GraphQL fuzz (%s)', (phase) => {
  it('every Query and Mutation field: errors are coded JSON, no leaks, rejected operations write nothing', async () => {
    const schema = await buildGraphqlSchema();
    const fields = [
      ...Object.values(schema.getQueryType()?.getFields() ?? {}).map((f) => ['query', f] as const),
      ...Object.values(schema.getMutationType()?.getFields() ?? {}).map((f) => ['mutation', f] as const),
    ];
    expect(fields.length).toBeGreaterThan(0);
    const runs = runsFor(GQL_BUDGET, fields.length);
    for (const [kind, field] of fields) {
      const query = operationFor(kind, field);
      const variables = fc.record(Object.fromEntries(field.args.map((a) => [a.name, valueFor(a.type)])), { requiredKeys: [] });
      await fc.assert(
        fc.asyncProperty(variables, headers(phase), async (vars, hdrs) => {
          const label = `${field.name} ${JSON.stringify(vars).slice(0, 300)}`;
          await probeUnchanged(
            label,
            kind === 'mutation',
            () => send('POST', '/graphql', { headers: { ...hdrs, 'content-type': 'application/json' }, body: JSON.stringify({ query, variables: vars }) }),
            (r) => checkGql(label, r),
          );
        }),
        { numRuns: runs },
      );
    }
  });
});
