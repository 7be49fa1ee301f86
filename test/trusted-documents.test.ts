import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../src/config/config';
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { buildPost } from './support/blog';
import { connect, untilSubscribed, type WsConnection } from './support/ws';
import { buildService, removeService, startInstance, stopInstance, type Instance } from './support/instances';

/**
 * CONTRACT 17: trusted documents. GRAPHQL_DOCUMENTS is a manifest `{ "<sha256 hex>": "<document>" }`
 * read at start; `documentId` runs its document on GET and POST; GRAPHQL_TRUSTED_DOCUMENTS=only
 * runs nothing else, on HTTP and over WebSocket. Apollo's automatic persisted queries keep working
 * in the default mode.
 */
jest.setTimeout(60_000);

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const GQL = 'application/graphql-response+json';

const DOCS = {
  posts: 'query Posts($page: Int) { posts(page: $page) { total data { id title } } }',
  two: 'query Me { me { id } } query Total { posts { total } }',
  post: 'query Post($id: Int!) { post(id: $id) { id title comments { body } } }',
  addComment: 'mutation Add($postId: Int!, $body: String!) { addComment(postId: $postId, body: $body) { id body } }',
  commentAdded: 'subscription Added($postId: Int!) { commentAdded(postId: $postId) { id body } }',
  introspection: 'query Intro { __schema { queryType { name } } }',
  typename: 'query Typename { __typename }',
};
const ID = Object.fromEntries(Object.entries(DOCS).map(([k, v]) => [k, sha256(v)])) as Record<keyof typeof DOCS, string>;

const dir = mkdtempSync(join(tmpdir(), 'trusted-documents-'));
const manifest = join(dir, 'persisted-documents.json');
writeFileSync(manifest, JSON.stringify(Object.fromEntries(Object.values(DOCS).map((d) => [sha256(d), d])), null, 2));

const open: WsConnection[] = [];
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.dispose()));
});

interface Answer {
  status: number;
  type: string | null;
  body: { data?: any; errors?: { message: string; extensions?: { code?: string } }[] };
}

async function postGql(app: TestApp, body: Record<string, unknown>, o: { accept?: string; token?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (o.accept) headers.accept = o.accept;
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  const res = await fetch(`${app.url}/graphql`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as Answer['body'] };
}

async function getGql(app: TestApp, params: Record<string, unknown>, o: { accept?: string } = {}): Promise<Answer> {
  const qs = new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
  const res = await fetch(`${app.url}/graphql?${qs}`, { headers: { accept: o.accept ?? 'application/json' } });
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as Answer['body'] };
}

/** A refusal: that code, no data; 200 under application/json and 400 under graphql-response+json. */
async function expectRefused(send: (accept: string) => Promise<Answer>, code: string): Promise<void> {
  for (const [accept, status] of [['application/json', 200], [GQL, 400]] as const) {
    const res = await send(accept);
    expect({ accept, status: res.status, code: res.body.errors?.[0]?.extensions?.code, hasData: 'data' in res.body }).toEqual({ accept, status, code, hasData: false });
    expect(res.type).toBe(`${accept}; charset=utf-8`);
  }
}

describe('GRAPHQL_DOCUMENTS (default mode): documentId alongside query texts and APQ', () => {
  let app: TestApp;
  let author: Awaited<ReturnType<typeof buildUser>>;
  let postId: number;
  beforeAll(async () => {
    app = await startTestApp({ GRAPHQL_DOCUMENTS: manifest });
    author = await buildUser(app, { name: 'Ada' });
    postId = (await buildPost(app, author.user, { title: 'Trusted', published: true })).id;
  });
  afterAll(() => app?.close());

  it('documentId (`<hex>`, `sha256:<hex>`, any case) runs the manifest document with variables and operationName, on POST and GET', async () => {
    const byText = await clients(app.url).gql(DOCS.post, { id: postId });
    expect(byText.data.post).toMatchObject({ id: postId, title: 'Trusted' });
    for (const documentId of [ID.post, `sha256:${ID.post}`, ID.post.toUpperCase()]) {
      const viaPost = await postGql(app, { documentId, variables: { id: postId } });
      expect({ status: viaPost.status, body: viaPost.body }).toEqual({ status: 200, body: { data: byText.data } });
      const viaGet = await getGql(app, { documentId, variables: { id: postId } });
      expect({ status: viaGet.status, body: viaGet.body }).toEqual({ status: 200, body: { data: byText.data } });
    }
    expect((await postGql(app, { documentId: ID.two, operationName: 'Total' })).body).toEqual({ data: { posts: { total: expect.any(Number) } } });
    expect((await getGql(app, { documentId: ID.two, operationName: 'Me' })).body).toEqual({ data: { me: null } });
    // A mutation by documentId, with the caller's token.
    const added = await postGql(app, { documentId: ID.addComment, variables: { postId, body: 'persisted' } }, { token: author.token });
    expect(added.body).toEqual({ data: { addComment: { id: expect.any(Number), body: 'persisted' } } });
  });

  it('an id not in the manifest (or not an id) is PERSISTED_QUERY_NOT_FOUND, on POST and GET', async () => {
    for (const documentId of [sha256('{ me { id } }'), 'sha256:nothex', '']) {
      await expectRefused((accept) => postGql(app, { documentId }, { accept }), 'PERSISTED_QUERY_NOT_FOUND');
      await expectRefused((accept) => getGql(app, { documentId }, { accept }), 'PERSISTED_QUERY_NOT_FOUND');
    }
    await expectRefused((accept) => postGql(app, { documentId: 42 }, { accept }), 'BAD_USER_INPUT');
  });

  it('documentId with a different query text is refused; with the same text it runs', async () => {
    await expectRefused((accept) => postGql(app, { documentId: ID.typename, query: '{ me { id } }' }, { accept }), 'BAD_USER_INPUT');
    expect((await postGql(app, { documentId: ID.typename, query: DOCS.typename })).body).toEqual({ data: { __typename: 'Query' } });
  });

  it("Apollo's automatic persisted queries keep working; a manifest hash needs no registration", async () => {
    const query = `{ posts(page: 1) { total } }`;
    const persistedQuery = { version: 1, sha256Hash: sha256(query) };
    const miss = await postGql(app, { extensions: { persistedQuery } });
    expect(miss.body.errors?.[0]).toMatchObject({ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } });
    await expectRefused((accept) => postGql(app, { extensions: { persistedQuery } }, { accept }), 'PERSISTED_QUERY_NOT_FOUND');
    await expectRefused((accept) => getGql(app, { extensions: { persistedQuery } }, { accept }), 'PERSISTED_QUERY_NOT_FOUND');
    expect((await postGql(app, { query, extensions: { persistedQuery } })).body).toEqual({ data: { posts: { total: expect.any(Number) } } });
    expect((await postGql(app, { extensions: { persistedQuery } })).body).toEqual({ data: { posts: { total: expect.any(Number) } } });
    expect((await getGql(app, { extensions: { persistedQuery } })).body).toEqual({ data: { posts: { total: expect.any(Number) } } });
    const manifestHash = { persistedQuery: { version: 1, sha256Hash: ID.typename } };
    expect((await postGql(app, { extensions: manifestHash })).body).toEqual({ data: { __typename: 'Query' } });
    expect((await getGql(app, { extensions: manifestHash })).body).toEqual({ data: { __typename: 'Query' } });
  });

  it('query texts and introspection still run', async () => {
    expect((await postGql(app, { query: '{ me { id } }' })).body).toEqual({ data: { me: null } });
    expect((await postGql(app, { documentId: ID.introspection })).body).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
  });

  it('over WebSocket, extensions.documentId names the subscription', async () => {
    const conn = connect(app);
    open.push(conn);
    const sub = conn.subscribe(DOCS.commentAdded, { postId }, { documentId: `sha256:${ID.commentAdded}` });
    await untilSubscribed(app, 1);
    const added = await postGql(app, { documentId: ID.addComment, variables: { postId, body: 'over ws' } }, { token: author.token });
    expect(await sub.nth(0)).toEqual({ data: { commentAdded: { id: added.body.data.addComment.id, body: 'over ws' } } });
  });
});

describe('GRAPHQL_TRUSTED_DOCUMENTS=only', () => {
  let app: TestApp;
  let author: Awaited<ReturnType<typeof buildUser>>;
  let postId: number;
  beforeAll(async () => {
    app = await startTestApp({ GRAPHQL_DOCUMENTS: manifest, GRAPHQL_TRUSTED_DOCUMENTS: 'only' });
    author = await buildUser(app, { name: 'Ada' });
    postId = (await buildPost(app, author.user, { title: 'Locked', published: true })).id;
  });
  afterAll(() => app?.close());

  it('manifest documents run by documentId on POST and GET, and by a manifest APQ hash', async () => {
    const expected = { data: { post: { id: postId, title: 'Locked', comments: [] } } };
    expect((await postGql(app, { documentId: ID.post, variables: { id: postId } })).body).toEqual(expected);
    expect((await getGql(app, { documentId: `sha256:${ID.post}`, variables: { id: postId } })).body).toEqual(expected);
    expect((await postGql(app, { variables: { id: postId }, extensions: { persistedQuery: { version: 1, sha256Hash: ID.post } } })).body).toEqual(expected);
    const added = await postGql(app, { documentId: ID.addComment, variables: { postId, body: 'allowed' } }, { token: author.token });
    expect(added.body.data.addComment.body).toBe('allowed');
  });

  it('a query text, even a manifest one, an APQ registration and introspection are refused with PERSISTED_QUERY_ONLY before anything runs', async () => {
    app.sql.length = 0;
    const register = { query: 'mutation { register(name: "Eve", email: "eve@example.test", password: "password123") { accessToken } }' };
    await expectRefused((accept) => postGql(app, register, { accept }), 'PERSISTED_QUERY_ONLY');
    await expectRefused((accept) => postGql(app, { query: '{ me { id } }' }, { accept }), 'PERSISTED_QUERY_ONLY');
    await expectRefused((accept) => postGql(app, { query: DOCS.typename }, { accept }), 'PERSISTED_QUERY_ONLY');
    await expectRefused((accept) => getGql(app, { query: '{ posts { total } }' }, { accept }), 'PERSISTED_QUERY_ONLY');
    const apq = (query: string) => ({ query, extensions: { persistedQuery: { version: 1, sha256Hash: sha256(query) } } });
    await expectRefused((accept) => postGql(app, apq('{ posts { total } }'), { accept }), 'PERSISTED_QUERY_ONLY');
    await expectRefused((accept) => getGql(app, apq('{ posts { total } }'), { accept }), 'PERSISTED_QUERY_ONLY');
    await expectRefused((accept) => postGql(app, { query: '{ __schema { types { name } } }' }, { accept }), 'PERSISTED_QUERY_ONLY');
    await expectRefused((accept) => postGql(app, { documentId: ID.introspection }, { accept }), 'PERSISTED_QUERY_ONLY');
    await expectRefused((accept) => getGql(app, { documentId: ID.introspection }, { accept }), 'PERSISTED_QUERY_ONLY');
    // Nothing ran: not a statement, and no account was made.
    expect(app.sql).toEqual([]);
    const [{ n }] = await app.orm.em.getConnection().execute(`select count(*)::int as n from users where email = 'eve@example.test'`);
    expect(n).toBe(0);
    // An unregistered APQ hash cannot be looked up elsewhere: not found; an unknown id too.
    await expectRefused((accept) => postGql(app, { extensions: { persistedQuery: { version: 1, sha256Hash: sha256('{ posts { total } }') } } }, { accept }), 'PERSISTED_QUERY_NOT_FOUND');
    await expectRefused((accept) => postGql(app, { documentId: sha256('{ me { id } }') }, { accept }), 'PERSISTED_QUERY_NOT_FOUND');
    // __typename is not introspection.
    expect((await postGql(app, { documentId: ID.typename })).body).toEqual({ data: { __typename: 'Query' } });
  });

  it('over WebSocket: a manifest document by extensions.documentId or by its exact text runs; anything else gets an error message with PERSISTED_QUERY_ONLY', async () => {
    const conn = connect(app);
    open.push(conn);
    const byId = conn.subscribe(DOCS.commentAdded.replace('Added', 'Ignored'), { postId }, { documentId: ID.commentAdded });
    const byText = conn.subscribe(DOCS.commentAdded, { postId });
    await untilSubscribed(app, 2);
    const added = await postGql(app, { documentId: ID.addComment, variables: { postId, body: 'live' } }, { token: author.token });
    const event = { data: { commentAdded: { id: added.body.data.addComment.id, body: 'live' } } };
    expect(await byId.nth(0)).toEqual(event);
    expect(await byText.nth(0)).toEqual(event);

    const refusedWith = async (sub: ReturnType<WsConnection['subscribe']>) => {
      await expect(sub.ended).rejects.toBeDefined();
      return (sub.error as { extensions?: { code?: string } }[])[0]?.extensions?.code;
    };
    expect(await refusedWith(conn.subscribe(`subscription { commentAdded(postId: ${postId}) { id } }`))).toBe('PERSISTED_QUERY_ONLY');
    expect(await refusedWith(conn.subscribe('{ __schema { types { name } } }'))).toBe('PERSISTED_QUERY_ONLY');
    expect(await refusedWith(conn.subscribe(DOCS.introspection))).toBe('PERSISTED_QUERY_ONLY');
    expect(await refusedWith(conn.subscribe('', {}, { documentId: sha256('nope') }))).toBe('PERSISTED_QUERY_NOT_FOUND');
    // The connection is still fine.
    expect(byId.completed).toBe(false);
  });
});

describe('a manifest that cannot be trusted stops the start', () => {
  const write = (name: string, content: string) => {
    const file = join(dir, name);
    writeFileSync(file, content);
    return file;
  };

  it('loadConfig: an unreadable or non-JSON file, a key that is not its document\'s sha256, or `only` without a manifest is a ConfigError naming it', () => {
    const missing = join(dir, 'missing.json');
    const notJson = write('not-json.json', '{ nope');
    const wrongKey = write('wrong-key.json', JSON.stringify({ [sha256('{ me { id } }')]: '{ me { id name } }' }));
    const notHex = write('not-hex.json', JSON.stringify({ abc: '{ me { id } }' }));
    const notString = write('not-string.json', JSON.stringify({ [sha256('x')]: 1 }));
    const array = write('array.json', '[]');
    for (const [file, pattern] of [
      [missing, /cannot read .*missing\.json \(ENOENT\)/],
      [dir, /cannot read .*trusted-documents-\w+ \(EISDIR\)/],
      [notJson, /not-json\.json is not JSON/],
      [wrongKey, /wrong-key\.json: key "[0-9a-f]{64}" is not the sha256 of its document/],
      [notHex, /not-hex\.json: key "abc" is not a sha256 hex hash/],
      [notString, /not-string\.json: the document of "[0-9a-f]{64}" is not a string/],
      [array, /array\.json must be a JSON object/],
    ] as const) {
      expect(() => loadConfig({ GRAPHQL_DOCUMENTS: file })).toThrow(ConfigError);
      expect(() => loadConfig({ GRAPHQL_DOCUMENTS: file })).toThrow(pattern);
    }
    expect(() => loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS: 'only' })).toThrow(/GRAPHQL_TRUSTED_DOCUMENTS=only: needs GRAPHQL_DOCUMENTS/);
    expect(() => loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS: 'yes' })).toThrow(/GRAPHQL_TRUSTED_DOCUMENTS/);
    const ok = loadConfig({ GRAPHQL_DOCUMENTS: manifest, GRAPHQL_TRUSTED_DOCUMENTS: 'only' });
    expect(ok.graphqlDocuments?.documents.size).toBe(Object.keys(DOCS).length);
    expect(ok.graphqlTrustedDocuments).toBe('only');
    expect(loadConfig({}).graphqlTrustedDocuments).toBe('off');
  });

  it('the service process exits 1 with a message naming the file, before anything starts', async () => {
    buildService();
    let instance: Instance | undefined;
    try {
      const bad = write('tampered.json', JSON.stringify({ [ID.typename]: '{ me { id } }' }));
      instance = startInstance({ GRAPHQL_DOCUMENTS: bad, GRAPHQL_TRUSTED_DOCUMENTS: 'only', DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
      expect(await instance.exited).toBe(1);
      expect(instance.output()).toContain(`GRAPHQL_DOCUMENTS: ${bad}: key "${ID.typename}" is not the sha256 of its document`);
      expect(instance.output()).not.toContain('listening');
    } finally {
      await stopInstance(instance);
      removeService();
    }
  });
});
