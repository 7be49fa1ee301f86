import { createSecretKey } from 'node:crypto';
import http from 'node:http';
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
 * (GraphQL) on errors; no stack trace or SQL; and a rejected request wrote no row.
 * Phase 1 sends no valid token (only junk authorization), phase 2 valid tokens of each role.
 *
 * The tokens' users are fixtures the fuzz must not destroy (an admin token deleting its own user
 * turns the rest of the phase into 401s): path ids and Int variables come from "victim" rows
 * made afresh for every route and operation, never the fixtures, and the fixtures are repaired
 * before each batch all the same. Phase 2 then shows, for every route and operation, at least
 * one answer past authentication and role checks (not 401/403), and few 401s overall.
 *
 * Each phase runs two lanes side by side: reads (GET routes, sent only as GET, and queries) and
 * writes (every other route, with a fuzzed method, and mutations). Only the write lane's
 * requests are checked for writes, one after the other, so the reads cannot blur the check.
 */
jest.setTimeout(120_000);

const CONTRACT_CODES = ['UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND', 'BAD_USER_INPUT', 'TOO_MANY_REQUESTS', 'PRECONDITION_FAILED', 'PRECONDITION_REQUIRED', 'SERVICE_UNAVAILABLE'];
/** Stack frames and SQL that must never reach a client. */
const LEAK = /\n\s*at |\bat [\w.<>]+ \(|\bselect\s|\binsert\s|\bupdate\s+"|\bdelete\s+from|violates|constraint|duplicate key|syntax error at|relation "|column "|mikro|knex|node_modules|\.ts:\d/i;
/** Tables that record attempts by design (failed logins) or that background jobs change. */
const UNWATCHED = new Set(['rate_limits', 'rate_attempts', 'mikro_orm_migrations', 'job_runs']);
/** Only inserts are watched: the mail job updates (and may clean up) rows on its own. */
const INSERT_ONLY = new Set(['mail_outbox']);

/** Requests per phase and surface, spread over the routes/fields that exist: 5,236 today, about 4,100 with a body. */
const REST_BUDGET = 1500;
const GQL_BUDGET = 1100;
const runsFor = (budget: number, n: number) => Math.min(300, Math.max(20, Math.ceil(budget / Math.max(1, n))));
const MIN_REQUESTS = 5000;
const MIN_WITH_BODY = 3000;

let app: TestApp;
let db: Client;
let routes: RouteDef[];
/** The token holders (user, moderator, admin); never a fuzzed id. */
let fixtures: number[] = [];
let tokens: string[] = [];
/** Rows the fuzz may hit and destroy, made afresh for every batch. */
const victims = { users: [] as number[], posts: [] as number[], comments: [] as number[], tenantPosts: [] as number[] };
const victimIds = () => [...victims.users, ...victims.posts, ...victims.comments, ...victims.tenantPosts];
const sent = { total: 0, withBody: 0 };

beforeAll(async () => {
  app = await startTestApp();
  routes = [
    ...restRoutes(app.built.services),
    // Express's routes: only their method and path are used here.
    { method: 'get', path: '/healthz', handler: () => Promise.reject(new Error('not called')) },
    { method: 'get', path: '/readyz', handler: () => Promise.reject(new Error('not called')) },
  ];
  db = new Client({ connectionString: app.databaseUrl });
  await db.connect();
  // Fixture ids far from the small numbers the generators like (0, 1, 2, 3, ...).
  await db.query(`select setval('users_id_seq', 1000000)`);
  const built = await Promise.all((['user', 'moderator', 'admin'] as const).map((role) => buildUser(app, { role, name: `Fuzz ${role}` })));
  tokens = built.map((b) => b.token);
  fixtures = built.map((b) => b.user.id);
  await watchWrites();
});

afterAll(async () => {
  Object.values(agents).forEach((a) => a.destroy());
  await db?.end();
  await app?.close();
});

/**
 * Every row written to a watched table is logged by a trigger into `fuzz_writes`, in the writer's
 * transaction (a rolled-back write leaves no log). One indexed read after a request then tells
 * whether it wrote anything, however large the tables grow.
 */
async function watchWrites(): Promise<void> {
  const res = await db.query(`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1`);
  const tables = res.rows.map((r) => r.table_name as string).filter((t) => !UNWATCHED.has(t));
  await db.query(`create table fuzz_writes (id bigserial primary key, tbl text not null, op text not null)`);
  await db.query(`create function fuzz_log() returns trigger language plpgsql as $$ begin insert into fuzz_writes (tbl, op) values (TG_TABLE_NAME, TG_OP); return null; end $$`);
  for (const t of tables) {
    const events = INSERT_ONLY.has(t) ? 'insert' : 'insert or update or delete';
    await db.query(`create trigger fuzz_log after ${events} on "${t}" for each row execute function fuzz_log()`);
  }
}

/** The last `fuzz_writes` id accounted for: every write up to it belongs to an earlier request or batch. */
let seen = 0;

/** The writes since the last call, as `OP table`. */
async function newWrites(): Promise<string[]> {
  const rows = (await db.query('select id, tbl, op from fuzz_writes where id > $1 order by id', [seen])).rows;
  if (rows.length) seen = Number(rows[rows.length - 1].id);
  return rows.map((r) => `${r.op} ${r.tbl}`);
}

/**
 * Before every batch: the fixtures as they were made, and fresh victims of every kind (an active,
 * a published and a trashed post of the fixture user, so ownership checks pass for its token, and
 * an active post of a victim user, with a comment, and a tenant post).
 */
async function prepareBatch(): Promise<void> {
  await db.query(`update users set deleted_at = null where id = any($1) and deleted_at is not null`, [fixtures]);
  const victim = await db.query(`insert into users (created_at, updated_at, name, email, password, role) values (now(), now(), 'Victim', 'victim-' || gen_random_uuid() || '@example.test', 'x', 'user') returning id`);
  const posts = await db.query(
    `insert into posts (created_at, updated_at, user_id, title, slug, body, published, published_at, deleted_at)
     select now(), now(), u, 'Victim', 'victim-' || gen_random_uuid(), 'Body', p, case when p then now() end, case when d then now() end
     from (values ($1::int, false, false), ($1, true, false), ($1, false, true), ($2, false, false)) v(u, p, d) returning id`,
    [fixtures[0], victim.rows[0].id],
  );
  const postIds = posts.rows.map((r) => r.id as number);
  const comment = await db.query(`insert into comments (created_at, updated_at, post_id, user_id, body) values (now(), now(), $1, $2, 'Comment') returning id`, [postIds[3], fixtures[0]]);
  const tp = await db.query(`insert into tenant_posts (created_at, updated_at, tenant_id, title, body) values (now(), now(), 1, 'T', 'B') returning id`);
  victims.users = [victim.rows[0].id];
  victims.posts = postIds;
  victims.comments = [comment.rows[0].id];
  victims.tenantPosts = [tp.rows[0].id];
  await newWrites();
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
  const real = fc.constantFrom(...victimIds().map(String));
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

// Keys, not strings: given a string, jsonwebtoken first tries it as a PEM key (a thrown error per call).
const SECRET = createSecretKey(Buffer.from('test-secret-that-is-at-least-32-characters-long'));
const OTHER_SECRET = createSecretKey(Buffer.from('a-different-secret-of-sufficient-length!!'));
const junkAuthorization = fc.oneof(
  printable,
  printable.map((s) => `Bearer ${s}`),
  fc.constantFrom('Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'bearer a.b.c', 'Bearer a.b.c', 'Bearer ..', 'Bearer eyJhbGciOiJub25lIn0.eyJpZCI6MX0.'),
  // Signed with the right secret but a payload no access token has.
  // (Small values: past 16 KB of headers Node itself answers 431 before the app; edges.test.ts covers that.)
  fc.dictionary(fc.constantFrom('id', 'tv', 'purpose', 'exp', 'sub'), fc.oneof(nastyNumber, fc.string({ maxLength: 20 }), fc.boolean(), fc.constant(null), fc.jsonValue({ maxDepth: 1 })), { maxKeys: 3 }).map(
    (payload) => `Bearer ${jwt.sign({ ...payload, exp: typeof payload.exp === 'number' && Number.isFinite(payload.exp) ? payload.exp : Math.floor(Date.now() / 1000) + 60 }, SECRET, { algorithm: 'HS256', noTimestamp: true })}`,
  ),
  fc.record({ id: nastyNumber }).map((p) => `Bearer ${jwt.sign(p, OTHER_SECRET, { algorithm: 'HS256' })}`),
);
const junkTenant = fc.oneof(printable, nastyNumber.map(String), fc.constantFrom('1', '2', '0', '-1', '1.5', '2147483648', ' 1 ', '1,2'));
const headers = (phase: 'anonymous' | 'authenticated') =>
  fc.record(
    {
      authorization: phase === 'authenticated' ? fc.constantFrom(...tokens).map((t) => `Bearer ${t}`) : junkAuthorization,
      // Mostly a real tenant once authenticated, so the tenant routes get past their 401 too.
      'x-tenant-id': phase === 'authenticated' ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom('1', '2', '3') }, { weight: 1, arbitrary: junkTenant }) : junkTenant,
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

/**
 * What is wrong with an answer, as `{ label, ...expected }` vs `{ label, ...actual }`: the
 * checks run on every one of thousands of answers, so expect() (which captures a stack each
 * call) is only reached when something is wrong, and then reports it with the request.
 */
function verdict(label: string, problems: Record<string, unknown>, expected: Record<string, unknown>): void {
  const keys = Object.keys(problems);
  if (keys.length) expect({ label, ...problems }).toEqual({ label, ...Object.fromEntries(keys.map((k) => [k, expected[k]])) });
}

function checkRest(label: string, r: Sent): { ok: boolean } {
  if (r.status >= 500) verdict(label, { status: r.status }, { status: 'below 500' });
  if (r.status === 204 || r.status === 304) return { ok: true };
  if (!/^application\/json/.test(r.contentType ?? '')) verdict(label, { contentType: r.contentType }, { contentType: 'application/json' });
  const body = JSON.parse(r.text);
  const ok = r.status < 400;
  if (!ok) {
    const problems: Record<string, unknown> = {};
    if (typeof body.message !== 'string') problems.message = typeof body.message;
    if (LEAK.test(r.text)) problems.text = r.text;
    if (r.status === 422 && !Array.isArray(body.errors)) problems.errors = body.errors;
    verdict(label, problems, { message: 'string', text: 'clean', errors: 'an array' });
  }
  return { ok };
}

/**
 * node:http with one kept-alive socket per lane: about half of fetch's cost a request, which
 * this file spends thousands of times.
 */
type Lane = 'read' | 'write';
const agents: Record<Lane, http.Agent> = {
  read: new http.Agent({ keepAlive: true, maxSockets: 1 }),
  write: new http.Agent({ keepAlive: true, maxSockets: 1 }),
};

function send(lane: Lane, method: string, path: string, init: { headers: Record<string, string>; body?: string }): Promise<Sent> {
  const headers = Object.fromEntries(Object.entries(init.headers).filter(([, v]) => v !== ''));
  const body = method === 'GET' || method === 'HEAD' ? undefined : init.body;
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  sent.total++;
  if (body) sent.withBody++;
  return new Promise((resolve, reject) => {
    const req = http.request(app.url + path, { method, headers, agent: agents[lane] }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, contentType: res.headers['content-type'] ?? null, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * One request; a rejected one (any 4xx) must not have written a row. Only requests that may
 * write (not GET; GraphQL mutations) are watched: reads are taken not to write, which lets them
 * run in a lane of their own beside the writes, and each watched request accounts for every
 * write since the one before it.
 */
async function probeUnchanged(label: string, mayWrite: boolean, run: () => Promise<Sent>, check: (r: Sent) => { ok: boolean }): Promise<Sent> {
  const r = await run();
  const { ok } = check(r);
  if (mayWrite) {
    const writes = await newWrites();
    if (!ok && writes.length) expect({ label, writes }).toEqual({ label, writes: [] });
  }
  return r;
}

// ---------- REST ----------

type Phase = 'anonymous' | 'authenticated';
const key = (r: RouteDef) => `${r.method.toUpperCase()} ${r.path}`;

/** What a phase's answers showed, for the logged-in phase's coverage checks. */
interface Tally {
  /** Per route, the statuses of requests sent with the route's own method. */
  answered: Map<string, Set<number>>;
  /** GraphQL fields that answered at least once without UNAUTHENTICATED or FORBIDDEN. */
  past: Set<string>;
  answers: number;
  /** 401s and UNAUTHENTICATED: with valid tokens, only a bad tenant header or bad credentials to login. */
  unauthenticated: number;
}

/**
 * One route's batch. The write lane fuzzes the method too (mostly the route's own); the read
 * lane sends only GET, so that it never writes.
 */
async function fuzzRoute(route: RouteDef, phase: Phase, lane: Lane, tally: Tally): Promise<void> {
  if (lane === 'write') await prepareBatch();
  const own = route.method.toUpperCase();
  const params = (route.path.match(/:\w+/g) ?? []).length;
  const methods = lane === 'read' ? fc.constant('GET') : fc.oneof({ weight: 9, arbitrary: fc.constant(own) }, { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE') });
  await fc.assert(
    fc.asyncProperty(
      fc.array(pathParam(phase === 'authenticated' ? 'real' : 'any'), { minLength: params, maxLength: params }),
      queryString,
      bodyText,
      contentType,
      headers(phase),
      methods,
      async (values, qs, body, type, hdrs, method) => {
        let i = 0;
        const path = route.path.replace(/:\w+/g, () => values[i++]) + qs;
        const label = `${method} ${path}`;
        const r = await probeUnchanged(label, method !== 'GET', () => send(lane, method, path, { headers: { ...hdrs, 'content-type': type }, body }), (x) => checkRest(label, x));
        if (method === own) tally.answered.get(key(route))!.add(r.status);
        tally.answers++;
        if (r.status === 401) tally.unauthenticated++;
      },
    ),
    { numRuns: runsFor(REST_BUDGET, routes.length) },
  );
}

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
    typed = fc.oneof(nastyNumber, fc.constantFrom(...victimIds()));
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
  if (r.status >= 500) verdict(label, { status: r.status }, { status: 'below 500' });
  if (!/^application\/(graphql-response\+)?json/.test(r.contentType ?? '')) verdict(label, { contentType: r.contentType }, { contentType: 'application/json' });
  const body = JSON.parse(r.text) as { data?: unknown; errors?: { message: unknown; extensions?: { code?: unknown } }[] };
  if (!body.errors) return { ok: true };
  const problems: Record<string, unknown> = {};
  for (const e of body.errors) {
    if (typeof e.message !== 'string') problems.message = typeof e.message;
    if (!CONTRACT_CODES.includes(e.extensions?.code as string)) problems.code = e.extensions?.code;
  }
  if (LEAK.test(r.text)) problems.text = r.text;
  verdict(label, problems, { message: 'string', code: 'a contract code', text: 'clean' });
  return { ok: false };
}

/** One operation's batch; queries go in the read lane, mutations in the write lane. */
async function fuzzField(kind: 'query' | 'mutation', field: GraphQLField<unknown, unknown>, phase: Phase, runs: number, tally: Tally): Promise<void> {
  const lane: Lane = kind === 'query' ? 'read' : 'write';
  if (lane === 'write') await prepareBatch();
  const query = operationFor(kind, field);
  const variables = fc.record(Object.fromEntries(field.args.map((a) => [a.name, valueFor(a.type)])), { requiredKeys: [] });
  await fc.assert(
    fc.asyncProperty(variables, headers(phase), async (vars, hdrs) => {
      const label = `${field.name} ${JSON.stringify(vars).slice(0, 300)}`;
      const r = await probeUnchanged(
        label,
        kind === 'mutation',
        () => send(lane, 'POST', '/graphql', { headers: { ...hdrs, 'content-type': 'application/json' }, body: JSON.stringify({ query, variables: vars }) }),
        (x) => checkGql(label, x),
      );
      const codes = ((JSON.parse(r.text) as { errors?: { extensions?: { code?: string } }[] }).errors ?? []).map((e) => e.extensions?.code);
      if (!codes.includes('UNAUTHENTICATED') && !codes.includes('FORBIDDEN')) tally.past.add(field.name);
      tally.answers++;
      if (codes.includes('UNAUTHENTICATED')) tally.unauthenticated++;
    }),
    { numRuns: runs },
  );
}

// ---------- the phases ----------

/** Both lanes to the end, then the first failure (a failed lane must not leave the other running into the next test). */
async function lanes(...runs: (() => Promise<void>)[]): Promise<void> {
  const failed = (await Promise.allSettled(runs.map((r) => r()))).find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}

describe.each(['anonymous', 'authenticated'] as const)('fuzz (%s)', (phase) => {
  it('every REST route and every GraphQL Query and Mutation field: never 5xx, coded JSON errors with a message, no leaks, rejected requests write nothing', async () => {
    const schema = await buildGraphqlSchema();
    const fields = [
      ...Object.values(schema.getQueryType()?.getFields() ?? {}).map((f) => ['query', f] as const),
      ...Object.values(schema.getMutationType()?.getFields() ?? {}).map((f) => ['mutation', f] as const),
    ];
    expect(fields.length).toBeGreaterThan(0);
    const runs = runsFor(GQL_BUDGET, fields.length);
    const tally: Tally = { answered: new Map(routes.map((r) => [key(r), new Set<number>()])), past: new Set(), answers: 0, unauthenticated: 0 };
    // The read lane starts on these victims; the write lane makes new ones for each of its batches.
    await prepareBatch();
    await lanes(
      async () => {
        for (const route of routes.filter((r) => r.method === 'get')) await fuzzRoute(route, phase, 'read', tally);
        for (const [kind, field] of fields.filter(([k]) => k === 'query')) await fuzzField(kind, field, phase, runs, tally);
      },
      async () => {
        for (const route of routes.filter((r) => r.method !== 'get')) await fuzzRoute(route, phase, 'write', tally);
        for (const [kind, field] of fields.filter(([k]) => k === 'mutation')) await fuzzField(kind, field, phase, runs, tally);
      },
    );
    if (phase === 'authenticated') {
      // Every route and operation got past authentication and its role check at least once...
      const stuck = [...tally.answered].filter(([, statuses]) => ![...statuses].some((st) => st !== 401 && st !== 403)).map(([k, st]) => `${k}: ${[...st].join(', ')}`);
      expect(stuck).toEqual([]);
      expect(fields.map(([, f]) => f.name).filter((n) => !tally.past.has(n))).toEqual([]);
      // ...and the tokens stayed valid throughout: about 5% of answers are 401s (bad tenant headers,
      // failed logins); when the fuzz deleted its own token holders it was over 25%.
      expect(tally.unauthenticated / tally.answers).toBeLessThan(0.1);
    }
  });
});

describe('volume', () => {
  it(`sent at least ${MIN_REQUESTS} generated requests, ${MIN_WITH_BODY} of them with a body`, () => {
    expect(sent.total).toBeGreaterThanOrEqual(MIN_REQUESTS);
    expect(sent.withBody).toBeGreaterThanOrEqual(MIN_WITH_BODY);
  });
});
