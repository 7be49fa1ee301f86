import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOpenApiDocument } from '../src/openapi/document';
import { userExample } from '../src/openapi/examples';
import { REQUEST_BODIES } from '../src/openapi/request-bodies';
import { run as runIn } from './support/run';
import { until } from './support/wait';
import { carrying, freshCopy, leftovers, npmStart, processes, stopStarted, type Copy, type Started } from './support/npm-start';

/**
 * The typed clients in examples/ (a package of its own) stay true to the service:
 * 1. its dependencies are installed by this test (`npm ci`, only when examples/node_modules is
 *    missing or was installed from another lock file);
 * 2. both clients regenerate, without a network, to exactly the committed output: GraphQL Code
 *    Generator's client preset from schema/schema.graphql (typed documents and the trusted
 *    documents manifest, persisted-documents.json), openapi-typescript from rest/openapi.json,
 *    itself the service's OpenAPI document;
 * 3. the examples type-check (tsc, which also builds them);
 * 4. each runs against `npm start` in a fresh copy of the project, and its typed results are
 *    what the service holds;
 * 5. Prism's validating proxy (@stoplight/prism-cli, an examples/ devDependency: frontend teams
 *    use it as a mock server, `npm run mock`) in front of that service, given the served
 *    /openapi.json, sees docs/api.md's curl tour and the REST example: no answer breaks the
 *    document, and the only requests it flags are the ones made wrong on purpose (each answered 422);
 * 6. Prism's mock server (`npm run mock`, from rest/openapi.json) answers the same curl tour
 *    without reporting one answer of its own that breaks the document: every schema with a
 *    pattern carries an example that matches it, so the mock never has to invent a value.
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

const root = join(__dirname, '..');
const examples = join(root, 'examples');
const bin = (...path: string[]) => join(examples, 'node_modules', ...path);
const guard = join(__dirname, 'support', 'no-network.cjs');
const manifest = join(examples, 'graphql', 'src', 'gql', 'persisted-documents.json');

/** Every generated file, by path under examples/: what a regeneration must reproduce byte for byte. */
function generated(): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const gql = join(examples, 'graphql', 'src', 'gql');
  if (existsSync(gql)) for (const name of readdirSync(gql).sort()) files.set(`graphql/src/gql/${name}`, readFileSync(join(gql, name)));
  for (const path of ['rest/openapi.json', 'rest/src/api.d.ts']) if (existsSync(join(examples, path))) files.set(path, readFileSync(join(examples, path)));
  return files;
}

/** `run` in examples/ unless told otherwise. */
const run = (command: string, args: string[], opts: Parameters<typeof runIn>[2] = {}) => runIn(command, args, { cwd: examples, ...opts });

/** The port a starting Prism logs that it listens on. */
async function prismPort(prism: ChildProcess, log: () => string): Promise<number> {
  const port = await until(() => (prism.exitCode !== null ? -1 : Number(/Prism is listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(log())?.[1] ?? 0)), 'Prism to listen', { ms: 30_000 }).catch((err: Error) => {
    throw new Error(`${err.message}:\n${log()}`);
  });
  if (port < 0) throw new Error(`Prism did not start:\n${log()}`);
  return port;
}

/**
 * Prism logs a request's violations before it answers, in one process and in order: once a
 * marker request's own line is in the log, so are the lines of every request answered before it.
 */
async function logCaughtUp(base: string, log: () => string): Promise<void> {
  // A documented read (a 200 from the mock, a documented 404 through the proxy) at an id no
  // request before it used, so its line is the marker's own.
  const path = `/posts/${2_147_480_000 + randomInt(3_000)}`;
  await fetch(base + path);
  const line = new RegExp(`${path}(?!\\d)`);
  await until(() => line.test(log()), `Prism's log line of the marker request ${path}`);
}

/** Fails with the command's output when it did not exit 0. */
async function ok(what: string, command: string, args: string[], opts: Parameters<typeof run>[2] = {}) {
  const r = await run(command, args, opts);
  if (r.code !== 0) throw new Error(`${what} exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
  return r;
}

/** The last line an example prints: its JSON summary. */
const summaryOf = (stdout: string) => JSON.parse(stdout.trim().split('\n').pop()!);

/**
 * docs/api.md's curl tour (what test/tour.test.ts runs), for `api` instead of localhost:3000. Run
 * it in the folder of the service it talks to (its `npm run set-role` steps and the mails it reads
 * are that service's); with `noProject` (Prism's mock, which has no database or mails) those steps
 * do nothing and `mailed` names a token of the document's form.
 */
function curlTour(api: string, noProject = false): string {
  const markdown = readFileSync(join(root, 'docs', 'api.md'), 'utf8');
  const section = markdown.slice(markdown.indexOf('## A tour with curl'));
  const block = /```sh\n([\s\S]*?)```/.exec(section.slice(0, section.indexOf('\n## ', 3)))?.[1];
  if (!block?.includes('API=http://localhost:3000\n')) throw new Error('docs/api.md: no ```sh block starting with API=http://localhost:3000 under "## A tour with curl"');
  const tour = block.replace('API=http://localhost:3000\n', `API=${api}\n`);
  if (!noProject) return tour;
  const token = (REQUEST_BODIES.ResetPasswordInput.example as { token: string }).token;
  if (!/^npm run --silent set-role /m.test(tour) || !/^mailed\(\) \{/m.test(tour)) throw new Error('docs/api.md\'s tour: no set-role step or no mailed() to stand in for');
  return tour.replace(/^npm run --silent set-role .*$/gm, ':').replace(/^EMAIL=/m, `mailed() { echo ${token}; }\nEMAIL=`);
}

/** rest/openapi.json as examples/scripts/fetch-openapi.mjs writes it from a running service. */
const openApiCopy = (doc: unknown) => JSON.stringify(doc, null, 2) + '\n';

beforeAll(async () => {
  // npm ci only when examples/node_modules is missing or was installed from another lock file.
  const lock = createHash('sha256').update(readFileSync(join(examples, 'package.json'))).update(readFileSync(join(examples, 'package-lock.json'))).digest('hex');
  const stamp = join(examples, 'node_modules', '.installed-from');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === lock) return;
  await ok('npm ci in examples/', 'npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], { timeoutMs: 240_000 });
  writeFileSync(stamp, lock);
}, 250_000);

describe('examples/: typed clients generated from the schema and the OpenAPI document', () => {
  it('regenerate without a network to exactly the committed output', async () => {
    const before = generated();
    expect([...before.keys()]).toEqual(expect.arrayContaining(['graphql/src/gql/graphql.ts', 'graphql/src/gql/persisted-documents.json', 'rest/openapi.json', 'rest/src/api.d.ts']));

    writeFileSync(join(examples, 'rest', 'openapi.json'), openApiCopy(buildOpenApiDocument()));
    const env = { ...process.env, NO_COLOR: '1' };
    await ok('graphql-codegen', process.execPath, ['--require', guard, bin('@graphql-codegen', 'cli', 'cjs', 'bin.js'), '--config', 'codegen.ts', '--silent'], { env });
    await ok('openapi-typescript', process.execPath, ['--require', guard, bin('openapi-typescript', 'bin', 'cli.js'), 'rest/openapi.json', '--output', 'rest/src/api.d.ts'], { env });

    const after = generated();
    const changed = [...new Set([...before.keys(), ...after.keys()])].filter((f) => !before.get(f)?.equals(after.get(f) ?? Buffer.alloc(0)) || !after.has(f));
    // The regenerated files are left in place: commit them if the change is meant.
    expect({ changed, hint: 'examples/: run `npm run generate` (and refresh rest/openapi.json) and commit the output' }).toEqual({ changed: [], hint: expect.any(String) });
  }, 120_000);

  it('the manifest is keyed by each document\'s sha256, the id the typed documents carry', () => {
    const documents = JSON.parse(readFileSync(manifest, 'utf8')) as Record<string, string>;
    const ids = Object.keys(documents);
    expect(ids.length).toBeGreaterThanOrEqual(6);
    for (const [id, text] of Object.entries(documents)) expect(id).toBe(createHash('sha256').update(text).digest('hex'));
    const typed = readFileSync(join(examples, 'graphql', 'src', 'gql', 'graphql.ts'), 'utf8');
    expect([...typed.matchAll(/"__meta__":\{"hash":"([0-9a-f]{64})"\}/g)].map((m) => m[1]).sort()).toEqual([...ids].sort());
    expect(Object.values(documents).some((d) => d.startsWith('subscription CommentAdded('))).toBe(true);
  });

  it('type-check (tsc, which builds them too)', async () => {
    await ok('tsc in examples/', process.execPath, [bin('typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { timeoutMs: 120_000 });
    for (const main of ['dist/graphql/src/main.js', 'dist/rest/src/main.js']) expect(existsSync(join(examples, main))).toBe(true);
  }, 120_000);

  it('the REST example runs against the Prism mock (npm run mock: answers from the document\'s examples)', async () => {
    const prism: ChildProcess = spawn(process.execPath, ['--require', guard, bin('@stoplight', 'prism-cli', 'dist', 'index.js'), 'mock', 'rest/openapi.json', '--port', '0'], {
      cwd: examples,
      // The mock needs no network: it may listen on loopback, nothing else.
      env: { ...process.env, NO_COLOR: '1', NO_NETWORK_ALLOW: 'loopback' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    prism.stdout!.setEncoding('utf8').on('data', (c) => (log += c));
    prism.stderr!.setEncoding('utf8').on('data', (c) => (log += c));
    const exited = new Promise((r) => prism.on('exit', r));
    try {
      const port = await prismPort(prism, () => log);
      // The token it logs in with is the document's example: it must travel as a header.
      const r = await run(process.execPath, [join(examples, 'dist', 'rest', 'src', 'main.js')], { env: { ...process.env, API_URL: `http://127.0.0.1:${port}` }, timeoutMs: 60_000 });
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      expect(summaryOf(r.stdout)).toMatchObject({ user: { id: userExample.id, name: userExample.name, email: userExample.email }, post: { id: expect.any(Number), published: true } });
      expect(log).not.toMatch(/NETWORK-ATTEMPT/);
    } finally {
      prism.kill('SIGTERM');
      await exited;
    }
  }, 60_000);

  it('npm run mock stopped by SIGTERM to npm\'s pid leaves nothing listening and no process', async () => {
    // Each process it starts carries the probe in its environment, whatever its parent.
    const probe = randomBytes(8).toString('hex');
    const npm = spawn('npm', ['run', 'mock', '--', '--port', '0'], {
      cwd: examples,
      env: { ...process.env, NO_COLOR: '1', MOCK_PROBE: probe },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let log = '';
    npm.stdout.setEncoding('utf8').on('data', (c) => (log += c));
    npm.stderr.setEncoding('utf8').on('data', (c) => (log += c));
    const exited = new Promise((r) => npm.on('exit', r));
    try {
      const port = await until(() => Number(/Prism is listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(log)?.[1] ?? 0), `Prism to listen:\n${log}`, { ms: 60_000 });
      expect((await fetch(`http://127.0.0.1:${port}/posts`)).status).toBe(200);
      expect(carrying('MOCK_PROBE', probe).some((p) => /prism mock/.test(p.cmd))).toBe(true);
      process.kill(npm.pid!, 'SIGTERM');
      await exited;
      expect(carrying('MOCK_PROBE', probe)).toEqual([]);
      await expect(fetch(`http://127.0.0.1:${port}/posts`)).rejects.toThrow();
    } finally {
      try { process.kill(-npm.pid!, 'SIGKILL'); } catch { /* nothing left */ }
    }
  }, 90_000);

  describe(`against npm start${TRUSTED_DOCUMENTS ? ' with GRAPHQL_TRUSTED_DOCUMENTS=only and the generated manifest' : ' (default mode: documents sent as text until trusted documents land)'}`, () => {
    let copy: Copy;
    let server: Started;
    let url: string;

    beforeAll(async () => {
      copy = freshCopy('examples');
      server = npmStart(copy, TRUSTED_DOCUMENTS ? { GRAPHQL_DOCUMENTS: manifest, GRAPHQL_TRUSTED_DOCUMENTS: 'only' } : {});
      await server.ready;
      url = `http://127.0.0.1:${server.port()}`;
    }, 120_000);

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

  describe('against a plain npm start (no manifest) and npm run test-server, as docs/clients.md and docs/testing.md say', () => {
    let copy: Copy;
    beforeAll(() => {
      copy = freshCopy('examples-plain');
    });
    afterAll(() => stopStarted(undefined, copy), 60_000);

    it('npm run graphql, with no setting, sends the documents\' text once the service says it has no manifest', async () => {
      const server = npmStart(copy);
      try {
        await server.ready;
        const r = await run(process.execPath, [join(examples, 'dist', 'graphql', 'src', 'main.js')], { env: { ...process.env, API_URL: `http://127.0.0.1:${server.port()}`, GRAPHQL_SEND: '' }, timeoutMs: 60_000 });
        expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
        expect(summaryOf(r.stdout)).toMatchObject({ send: 'query', received: { body: expect.stringMatching(/^Comment \d+ from the GraphQL example$/) } });
      } finally {
        await stopStarted(server, undefined);
      }
    }, 120_000);

    it('the integration suite of examples/testing passes on npm run test-server, and leaves no server behind', async () => {
      const before = readdirSync(tmpdir()).filter((n) => n.startsWith('blog-api-test-server-'));
      // TAP, named: off a terminal Node's default is the spec reporter; the summary lines below are TAP's.
      const r = await run(process.execPath, ['--test', '--test-reporter=tap', 'dist/testing/api.test.js'], { env: { ...process.env, BLOG_API_DIR: copy.dir, NODE_ENV: '', PORT: '', DATABASE_URL: '' }, timeoutMs: 120_000 });
      expect({ code: r.code, summary: r.stdout.split('\n').filter((l) => /^# (pass|fail|skipped|todo) /.test(l)) }).toEqual({ code: 0, summary: ['# pass 5', '# fail 0', '# skipped 0', '# todo 0'] });
      // No process of that server, and no directory of it (other test files may run test servers of their own meanwhile).
      expect(leftovers(copy)).toEqual([]);
      const owner = (n: string) => Number(existsSync(join(tmpdir(), n, 'owner.pid')) ? readFileSync(join(tmpdir(), n, 'owner.pid'), 'utf8') : NaN);
      const orphaned = readdirSync(tmpdir()).filter((n) => n.startsWith('blog-api-test-server-') && !before.includes(n) && !processes().some((p) => p.pid === owner(n)));
      expect(orphaned).toEqual([]);
    }, 120_000);
  });

  describe('Prism\'s mock server (npm run mock)', () => {
    /** Every schema (header, parameter, body) that has a pattern, with its path in the document. */
    function patterned(node: unknown, path: string, found: { path: string; pattern: string; example: unknown }[] = []) {
      if (Array.isArray(node)) node.forEach((n, i) => patterned(n, `${path}/${i}`, found));
      else if (node && typeof node === 'object') {
        const o = node as Record<string, unknown>;
        if (typeof o.pattern === 'string') found.push({ path, pattern: o.pattern, example: o.example });
        for (const [k, v] of Object.entries(o)) patterned(v, `${path}/${k}`, found);
      }
      return found;
    }

    it('every schema with a pattern has an example that matches it', () => {
      const found = patterned(buildOpenApiDocument(), '#');
      expect(found.map((f) => f.path)).toEqual(expect.arrayContaining(['#/components/headers/ETag/schema']));
      expect(found.filter((f) => typeof f.example !== 'string' || !new RegExp(f.pattern, 'u').test(f.example))).toEqual([]);
    });

    it('answers the curl tour without a violation of the document in its own log', async () => {
      const prism: ChildProcess = spawn(process.execPath, ['--require', guard, bin('@stoplight', 'prism-cli', 'dist', 'index.js'), 'mock', 'rest/openapi.json', '--port', '0'], {
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
        const mock = `http://127.0.0.1:${port}`;
        const tour = await run('bash', [], { input: curlTour(mock, true), timeoutMs: 120_000 });
        const statuses = tour.stderr.split('\n').filter((l) => /^→ \d{3}$/.test(l)).map((l) => Number(l.slice(2)));
        expect(statuses.length).toBeGreaterThanOrEqual(25);
        // The public reads, whose answers carry the patterned ETag header.
        const tags = await Promise.all(['/posts', '/posts/1'].map(async (path) => (await fetch(mock + path)).headers.get('etag')));

        await logCaughtUp(mock, () => log);
        const violations = log.split('\n').filter((l) => /Violation:/.test(l)).map((l) => l.slice(l.indexOf('Violation:') + 11));
        expect(log).not.toMatch(/NETWORK-ATTEMPT/);
        expect(violations.filter((v) => !v.startsWith('request'))).toEqual([]);
        for (const tag of tags) expect(tag).toMatch(/^"[^"]*"$/);
      } finally {
        prism.kill('SIGTERM');
        await exited;
      }
    }, 200_000);
  });
});
