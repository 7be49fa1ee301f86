import { startTestApp, type TestApp } from './support/harness';
import { buildUser, uniqueEmail } from './support/factories';
import { outboxCount, query } from './support/accounts';

/**
 * CONTRACT 12: at most 30 aliases and at most one account mutation per document, refused before
 * execution with BAD_USER_INPUT and no `data`; no batches. On both POST and GET /graphql.
 */
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

/** The whole answer, `data` included only when present: "no data" is then visible in toEqual. */
async function send(method: 'GET' | 'POST', queryText: string, opts: { variables?: Record<string, unknown>; operationName?: string; token?: string } = {}) {
  const headers: Record<string, string> = opts.token ? { authorization: `Bearer ${opts.token}` } : {};
  let res: Response;
  if (method === 'GET') {
    const params = new URLSearchParams({ query: queryText });
    if (opts.variables) params.set('variables', JSON.stringify(opts.variables));
    if (opts.operationName) params.set('operationName', opts.operationName);
    res = await fetch(`${app.url}/graphql?${params}`, { headers });
  } else {
    res = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ query: queryText, variables: opts.variables, operationName: opts.operationName }),
    });
  }
  return { status: res.status, body: (await res.json()) as { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: Record<string, unknown> }[] } };
}

const aliases = (n: number, field = '__typename', prefix = 'a') => Array.from({ length: n }, (_, i) => `${prefix}${i}: ${field}`).join(' ');
const refused = (message: string) => ({ status: 200, body: { errors: [expect.objectContaining({ message, extensions: { code: 'BAD_USER_INPUT' } })] } });
const tooManyAliases = refused('Too many aliases: a document may use at most 30');
const tooManyAccountMutations = refused('Too many account mutations: a document may use at most 1');

describe.each(['POST', 'GET'] as const)('aliases over %s', (method) => {
  it('30 are answered; 31 are refused with no data, `__typename` aliases counted too', async () => {
    const ok = await send(method, `{ ${aliases(30)} }`);
    expect(ok.status).toBe(200);
    expect(Object.keys(ok.body.data ?? {})).toHaveLength(30);
    expect(ok.body.errors).toBeUndefined();
    expect(await send(method, `{ ${aliases(31)} }`)).toEqual(tooManyAliases);
  });

  it('31 aliases of a field that reads the database run no SQL', async () => {
    const { token } = await buildUser(app);
    app.sql.length = 0;
    expect(await send(method, `{ ${aliases(31, 'me { id }')} }`, { token })).toEqual(tooManyAliases);
    expect(app.sql).toEqual([]);
  });

  it('an alias in a fragment counts once per spread, nested aliases count, and so does every operation of the document', async () => {
    const fragment = `fragment F on Query { ${aliases(15)} }`;
    expect((await send(method, `{ ...F x: me { id } } ${fragment}`)).body.errors).toBeUndefined();
    expect(await send(method, `{ ...F x: me { id } ... on Query { ...F } } ${fragment}`)).toEqual(tooManyAliases);
    expect(await send(method, `{ posts { data { ...P } } p2: posts { data { ...P } } } fragment P on Post { ${aliases(15, 'id')} }`)).toEqual(tooManyAliases);
    // Only one operation runs, but the contract limits the document: the other operation's aliases count.
    expect(await send(method, `query A { ${aliases(16)} } query B { ${aliases(15)} }`, { operationName: 'A' })).toEqual(tooManyAliases);
  });
});

describe('account mutations over POST', () => {
  it('two `register`s in one document create no account and queue no mail', async () => {
    const [e1, e2] = [uniqueEmail('twice'), uniqueEmail('twice')];
    const res = await send('POST', `mutation {
      a: register(name: "A", email: "${e1}", password: "password123") { token }
      b: register(name: "B", email: "${e2}", password: "password123") { token }
    }`);
    expect(res).toEqual(tooManyAccountMutations);
    expect(await query(app, 'select id from users where email in (?, ?)', [e1, e2])).toEqual([]);
    expect((await outboxCount(app, e1)) + (await outboxCount(app, e2))).toBe(0);
  });

  it('any two of the six count, wherever they stand: fragments, inline fragments, variables', async () => {
    const { user } = await buildUser(app);
    const res = await send(
      'POST',
      `mutation M($email: String!) { ...F ... on Mutation { forgotPassword(email: $email) { message } } }
       fragment F on Mutation { resendVerification { message } }`,
      { variables: { email: user.email } },
    );
    expect(res).toEqual(tooManyAccountMutations);
    expect(await outboxCount(app, user.email)).toBe(0);
    const all = `mutation {
      register(name: "A", email: "x@example.test", password: "password123") { token }
      login(email: "x@example.test", password: "password123") { token }
      forgotPassword(email: "x@example.test") { message }
      resetPassword(token: "t", password: "password123") { message }
      verifyEmail(token: "t") { message }
      resendVerification { message }
    }`;
    expect(await send('POST', all)).toEqual(tooManyAccountMutations);
  });

  it('one is allowed, next to other mutations; the same field twice with one response key is one call', async () => {
    const { user, password } = await buildUser(app);
    const once = await send('POST', `mutation { login(email: "${user.email}", password: "${password}") { token } }`);
    expect(once.status).toBe(200);
    expect(once.body.data?.login).toEqual({ token: expect.any(String) });
    const merged = await send('POST', `mutation { login(email: "${user.email}", password: "${password}") { token } login(email: "${user.email}", password: "${password}") { user { id } } }`);
    expect(merged.body.errors).toBeUndefined();
    expect(merged.body.data?.login).toEqual({ token: expect.any(String), user: { id: user.id } });
  });
});

describe('account mutations over GET', () => {
  it('two are refused by the limit (validation comes first); one is refused as a mutation over GET; neither runs', async () => {
    const email = uniqueEmail('get');
    const two = `mutation { a: register(name: "A", email: "${email}", password: "password123") { token } b: login(email: "${email}", password: "password123") { token } }`;
    expect(await send('GET', two)).toEqual(tooManyAccountMutations);
    const one = `mutation { register(name: "A", email: "${email}", password: "password123") { token } }`;
    expect(await send('GET', one)).toEqual(refused('GET requests only support query operations, not mutation operations'));
    expect(await query(app, 'select id from users where email = ?', [email])).toEqual([]);
  });
});

describe('batches', () => {
  it('a JSON array of operations is refused whole with 400 BAD_USER_INPUT: none of them runs', async () => {
    const emails = [uniqueEmail('batch'), uniqueEmail('batch')];
    const body = emails.map((email) => ({ query: `mutation { register(name: "B", email: "${email}", password: "password123") { token } }` }));
    const res = await fetch(`${app.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect({ status: res.status, body: await res.json() }).toEqual({
      status: 400,
      body: { errors: [expect.objectContaining({ message: 'Operation batching disabled.', extensions: { code: 'BAD_USER_INPUT' } })] },
    });
    expect(await query(app, 'select id from users where email in (?, ?)', emails)).toEqual([]);
  });
});
