import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freshCopy, npmStart, stopStarted, type Copy, type Started } from './support/npm-start';
import { bin, curlTour, examples, guard, logCaughtUp, manifest, openApiCopy, preparedExamples, prismPort, run, summaryOf } from './support/examples';

/**
 * examples/ against `npm start` in a fresh copy of the project: each typed client runs, and its
 * typed results are what the service holds; Prism's validating proxy in front of that service,
 * given the served /openapi.json, sees docs/api.md's curl tour and the REST example and finds no
 * answer that breaks the document. What the examples are: test/examples.test.ts.
 */

// ─── THE SWITCH ──────────────────────────────────────────────────────────────────────────────
// false until the service has trusted documents (CONTRACT 17: GRAPHQL_DOCUMENTS, `documentId`,
// GRAPHQL_TRUSTED_DOCUMENTS=only). Then set it to true: the service starts with the manifest
// the client preset generated (examples/graphql/src/gql/persisted-documents.json) in `only`
// mode, the GraphQL example sends document ids only (HTTP `documentId`, WebSocket
// `extensions.documentId`), and a document's text is refused with PERSISTED_QUERY_ONLY.
// While false, the service runs in its default mode and the example sends the documents' text.
const TRUSTED_DOCUMENTS = true;
// ─────────────────────────────────────────────────────────────────────────────────────────────

describe('examples/: typed clients generated from the schema and the OpenAPI document', () => {
  describe(`against npm start${TRUSTED_DOCUMENTS ? ' with GRAPHQL_TRUSTED_DOCUMENTS=only and the generated manifest' : ' (default mode: documents sent as text until trusted documents land)'}`, () => {
    let copy: Copy;
    let server: Started;
    let url: string;

    beforeAll(async () => {
      copy = freshCopy('examples');
      // The lowest bcrypt cost, as the test server's (docs/testing.md): the examples and the tour
      // register and log in a dozen times, which is not what they are about.
      const cost = { BCRYPT_COST: '4' };
      server = npmStart(copy, TRUSTED_DOCUMENTS ? { ...cost, GRAPHQL_DOCUMENTS: manifest, GRAPHQL_TRUSTED_DOCUMENTS: 'only' } : cost);
      // Built by tsc meanwhile (test/support/examples.ts: once per run, whichever file asks first).
      await Promise.all([server.ready, preparedExamples()]);
      url = `http://127.0.0.1:${server.port()}`;
    }, 450_000);

    afterAll(() => stopStarted(server, copy), 60_000);

    const example = (name: 'rest' | 'graphql', env: Record<string, string> = {}) =>
      run(process.execPath, [join(examples, 'dist', name, 'src', 'main.js')], { env: { ...process.env, API_URL: url, ...env }, timeoutMs: 60_000 });

    it('serves the OpenAPI document the REST client was generated from', async () => {
      const served = await (await fetch(`${url}/openapi.json`)).json();
      expect(openApiCopy(served)).toBe(readFileSync(join(examples, 'rest', 'openapi.json'), 'utf8'));
    });

    it('the REST example registers, creates and publishes a post, lists posts and reads a typed refusal', async () => {
      const r = await example('rest');
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      expect(r.stdout.split('\n').slice(0, 2)).toEqual([expect.stringMatching(/^registered REST Example \(user \d+, /), expect.stringMatching(/^created post \d+ "Typed from REST /)]);
      const summary = summaryOf(r.stdout);
      expect(summary).toEqual({
        user: { id: expect.any(Number), name: 'REST Example', email: expect.stringMatching(/^rest-example-.*@example\.com$/) },
        post: { id: expect.any(Number), slug: expect.stringMatching(/^typed-from-rest-/), published: true },
        listed: { total: 1, ids: [summary.post.id] },
        refusal: { status: 422, message: 'Validation failed', fields: ['page'] },
      });
      // What it printed is what the service holds.
      const post = await (await fetch(`${url}/posts/${summary.post.id}`)).json();
      expect(post).toMatchObject({ id: summary.post.id, user_id: summary.user.id, published: true, user: { name: 'REST Example' } });
    }, 60_000);

    it(`the GraphQL example registers, posts, comments and receives the comment over its subscription${TRUSTED_DOCUMENTS ? ', sending document ids only' : ''}`, async () => {
      const r = await example('graphql', { GRAPHQL_SEND: TRUSTED_DOCUMENTS ? 'documentId' : 'query' });
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      const summary = summaryOf(r.stdout);
      expect(summary).toEqual({
        send: TRUSTED_DOCUMENTS ? 'documentId' : 'query',
        user: { id: expect.any(Number), name: 'GraphQL Example' },
        post: { id: expect.any(Number), slug: expect.stringMatching(/^typed-from-graphql-/), published: true, retriedId: summary.post.id, etagChanged: true },
        commentsWritten: expect.arrayContaining([summary.received.id]),
        received: { id: expect.any(Number), postId: summary.post.id, body: expect.stringMatching(/^Comment \d+ from the GraphQL example$/), author: 'GraphQL Example' },
        listed: { id: summary.post.id, commentsCount: summary.commentsWritten.length },
      });
      const post = (await (await fetch(`${url}/posts/${summary.post.id}`)).json()) as { comments: { id: number }[] };
      expect(post.comments.map((c: { id: number }) => c.id)).toEqual(summary.commentsWritten);
    }, 60_000);

    it('Prism\'s validating proxy finds no answer that breaks the document, on the curl tour and the REST example', async () => {
      // The served document; the proxy may reach the service on loopback, nothing else.
      const prism: ChildProcess = spawn(process.execPath, ['--require', guard, bin('@stoplight', 'prism-cli', 'dist', 'index.js'), 'proxy', `${url}/openapi.json`, url, '--port', '0'], {
        cwd: examples,
        env: { ...process.env, NO_COLOR: '1', NO_NETWORK_ALLOW: 'loopback' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let log = '';
      prism.stdout!.setEncoding('utf8').on('data', (c) => (log += c));
      prism.stderr!.setEncoding('utf8').on('data', (c) => (log += c));
      const exited = new Promise((r) => prism.on('exit', r));
      try {
        const port = await prismPort(prism, () => log);
        const proxy = `http://127.0.0.1:${port}`;

        const tour = await run('bash', [], { input: curlTour(proxy), cwd: copy.dir, env: { ...process.env, NODE_ENV: 'development', DATA_DIR: copy.dataDir, DATABASE_URL: '', JWT_SECRET: '' }, timeoutMs: 120_000 });
        const statuses = tour.stderr.split('\n').filter((l) => /^→ \d{3}$/.test(l)).map((l) => Number(l.slice(2)));
        expect(statuses.length).toBeGreaterThanOrEqual(25);
        const rest = await run(process.execPath, [join(examples, 'dist', 'rest', 'src', 'main.js')], { env: { ...process.env, API_URL: proxy }, timeoutMs: 60_000 });
        expect({ code: rest.code, stderr: rest.stderr }).toEqual({ code: 0, stderr: '' });
        const deliberate = statuses.filter((s) => s === 422).length + (summaryOf(rest.stdout).refusal?.status === 422 ? 1 : 0);

        await logCaughtUp(proxy, () => log);
        const violations = log.split('\n').filter((l) => /Violation:/.test(l)).map((l) => l.slice(l.indexOf('Violation:') + 11));
        expect(log).not.toMatch(/NETWORK-ATTEMPT/);
        expect(violations.filter((v) => !v.startsWith('request'))).toEqual([]);
        expect({ requestViolations: violations.length, deliberate }).toEqual({ requestViolations: deliberate, deliberate: expect.any(Number) });
        expect(deliberate).toBeGreaterThanOrEqual(2);
      } finally {
        prism.kill('SIGTERM');
        await exited;
      }
    }, 200_000);

    it('with GRAPHQL_TRUSTED_DOCUMENTS=only, a document\'s text is refused and a manifest id runs', async () => {
      const text = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ posts(page: 1) { total } }' }) });
      const refused = (await text.json()) as { errors?: { extensions?: { code?: string } }[] };
      expect(refused.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_ONLY');
      const documents = JSON.parse(readFileSync(manifest, 'utf8')) as Record<string, string>;
      const posts = Object.keys(documents).find((id) => documents[id].startsWith('query Posts('))!;
      const byId = await fetch(`${url}/graphql?documentId=${posts}&variables=${encodeURIComponent('{"page":1}')}`);
      expect(await byId.json()).toEqual({ data: { posts: expect.objectContaining({ currentPage: 1 }) } });
    });
  });
});
