import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshCopy, npmStart, processes, stopStarted, waitUntil, type Copy, type Proc, type Started } from './support/npm-start';
import { connect, untilSubscribedAt } from './support/ws';
import { settled } from './support/wait';
import { Client } from 'pg';
import { createTestDatabase, type TestApp } from './support/harness';

/**
 * `npm run test-server`, as a client team's test suite runs it: one JSON line on stdout, both
 * surfaces, the /__test routes, and nothing left once SIGTERM has stopped it. Also: production
 * is refused, and `npm start` has no /__test routes at all.
 */
let copy: Copy;
beforeAll(() => {
  copy = freshCopy('test-server');
});
afterAll(async () => {
  await stopStarted(undefined, copy);
});

const BANNER = /^\n> blog-api@1\.0\.0 test-server\n> npm run build --silent && exec node dist\/src\/test-server\.js\n\n/;
const LINE = /^\{"url":"http:\/\/127\.0\.0\.1:(\d+)","graphql":"ws:\/\/127\.0\.0\.1:\1\/graphql"\}\n$/;

interface Running { npm: ChildProcess; stdout: () => string; stderr: () => string; line: Promise<string>; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> }

/** `npm run test-server` in the copy, with the environment a CI job would have (no PORT, DATA_DIR, DATABASE_URL). */
function runTestServer(env: Record<string, string> = {}, npmArgs: string[] = []): Running {
  const clean = { ...process.env };
  for (const k of ['PORT', 'DATA_DIR', 'DATABASE_URL', 'NODE_ENV', 'JWT_SECRET', 'LOG_LEVEL', 'APP_URL']) delete clean[k];
  const npm = spawn('npm', ['run', ...npmArgs, 'test-server'], { cwd: copy.dir, env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  npm.stderr.on('data', (c) => (err += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => npm.on('exit', (code, signal) => resolve({ code, signal })));
  const line = new Promise<string>((resolve, reject) => {
    npm.stdout.on('data', (c) => {
      out += c;
      const found = /^\{.*\}$/m.exec(out);
      if (found) resolve(found[0]);
    });
    void exited.then(() => reject(new Error(`exited before its line:\n${out}\n${err}`)));
  });
  line.catch(() => undefined);
  return { npm, stdout: () => out, stderr: () => err, line, exited };
}

const json = (res: Response) => res.json() as Promise<any>;
async function call(base: string, method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Processes of this test server: npm and node in the copy, PostgreSQL in the server's directory. */
const serverProcesses = (dir: string): Proc[] =>
  processes().filter((p) => p.pid !== process.pid && (p.cwd === copy.dir || p.cwd.startsWith(`${copy.dir}/`) || p.cwd === dir || p.cwd.startsWith(`${dir}/`)));

it('/__test/* is 404 under npm start, exactly as an unknown path', async () => {
  let started: Started | undefined;
  try {
    started = npmStart(copy);
    await started.ready;
    const base = `http://127.0.0.1:${started.port()}`;
    const unknown = await call(base, 'POST', '/no-such-path');
    expect(unknown).toEqual({ status: 404, body: { message: expect.any(String) } });
    for (const [method, path] of [['POST', '/__test/reset'], ['GET', '/__test/mails'], ['DELETE', '/__test/mails'], ['GET', '/__test/mails?to=a@b.c']]) {
      expect({ method, path, ...(await call(base, method, path)) }).toEqual({ method, path, ...unknown });
    }
  } finally {
    await stopStarted(started, undefined);
  }
}, 120_000);

it('refuses NODE_ENV=production: exit 1, a message on stderr, nothing on stdout, no directory made', async () => {
  const before = readdirSync(tmpdir()).filter((n) => n.startsWith('blog-api-test-server-'));
  const run = runTestServer({ NODE_ENV: 'production' }, ['--silent']);
  expect(await run.exited).toEqual({ code: 1, signal: null });
  expect(run.stdout()).toBe('');
  expect(run.stderr()).toContain('test-server: refusing to start with NODE_ENV=production');
  expect(readdirSync(tmpdir()).filter((n) => n.startsWith('blog-api-test-server-'))).toEqual(before);
}, 60_000);

it('prints one line, serves both surfaces, resets (with and without the demo fixture), captures mail, and leaves nothing after SIGTERM', async () => {
  const run = runTestServer();
  let dir = '';
  try {
    const line = await run.line;
    const [, port] = LINE.exec(`${line}\n`)!;
    const { url, graphql } = JSON.parse(line) as { url: string; graphql: string };
    // npm's own banner first (npm run --silent drops it), then the one line.
    expect(run.stdout()).toMatch(BANNER);
    expect(run.stdout().replace(BANNER, '')).toMatch(LINE);
    const node = processes().find((p) => p.cwd === copy.dir && /dist\/src\/test-server\.js/.test(p.cmd))!;
    dir = readdirSync(tmpdir())
      .filter((n) => n.startsWith('blog-api-test-server-'))
      .map((n) => join(tmpdir(), n))
      .find((d) => existsSync(join(d, 'owner.pid')) && readFileSync(join(d, 'owner.pid'), 'utf8') === String(node.pid))!;
    expect(dir).toBeTruthy();
    // The database cluster lives inside that directory, even as root.
    expect(realpathSync(join(dir, 'postgres')).startsWith(`${realpathSync(dir)}/`)).toBe(true);
    expect(serverProcesses(dir).some((p) => /postgres/.test(p.cmd) && p.cwd.startsWith(dir))).toBe(true);

    // The demo fixture: the data of `npm run seed`.
    expect(await call(url, 'POST', '/__test/reset', { fixture: 'demo' })).toEqual({ status: 204, body: undefined });
    expect((await call(url, 'GET', '/posts')).body.total).toBe(5); // six posts, one in the trash
    const grace = await call(url, 'POST', '/auth/login', { email: 'grace@example.com', password: 'demo-password' });
    expect(grace.status).toBe(200);
    const gql = await json(await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${grace.body.token}` }, body: JSON.stringify({ query: '{ me { email role } }' }) }));
    expect(gql).toEqual({ data: { me: { email: 'grace@example.com', role: 'user' } } });

    // GraphQL over WebSocket at the printed URL: subscribe, then publish once the subscription is
    // registered (a subscribe is not acknowledged, so a write right after it could come too early).
    const ws = connect({ url: graphql.replace(/^ws/, 'http').replace(/\/graphql$/, '') } as TestApp);
    await ws.connected;
    const events = ws.subscribe<{ postPublished: { title: string } }>('subscription { postPublished { title } }');
    // Registered once the service counts it: a post published next is delivered.
    await untilSubscribedAt(url, 'postPublished');
    const post = await call(url, 'POST', '/posts', { title: 'Live 0', body: 'Hello' }, grace.body.token);
    expect(post.status).toBe(201);
    expect((await call(url, 'PATCH', `/posts/${post.body.id}/publish`, undefined, grace.body.token)).status).toBe(200);
    expect((await settled(events.nth(0), 'the published post over the subscription')).data!.postPublished.title).toBe('Live 0');
    await ws.dispose();

    // Without a fixture: every table empty, ids from 1, and tokens from before refused.
    expect(await call(url, 'POST', '/__test/reset')).toEqual({ status: 204, body: undefined });
    expect((await call(url, 'GET', '/posts')).body.total).toBe(0);
    expect(await call(url, 'GET', '/auth/me', undefined, grace.body.token)).toEqual({ status: 401, body: { message: 'Invalid token' } });
    const ada = await call(url, 'POST', '/auth/register', { name: 'Ada', email: 'ada@example.com', password: 'first-password' });
    expect(ada.status).toBe(201);
    expect(ada.body.user.id).toBe(1);

    // Mail: the verification mail of the registration, then a password reset read from its mail.
    expect(await call(url, 'POST', '/auth/forgot-password', { email: 'ada@example.com' })).toMatchObject({ status: 200 });
    const mails = (await call(url, 'GET', '/__test/mails?to=ada@example.com')).body as { to: string; subject: string; text: string; sentAt: string }[];
    expect(mails.map((m) => m.to)).toEqual(['ada@example.com', 'ada@example.com']);
    expect(new Date(mails[0].sentAt).getTime()).toBeLessThanOrEqual(new Date(mails[1].sentAt).getTime());
    const reset = mails[1];
    expect(reset.subject).toMatch(/reset/i);
    expect(reset.text).toContain(`${url}/reset-password#token=`);
    const token = /#token=([0-9a-f]{64})\n/.exec(reset.text)![1];
    expect(await call(url, 'POST', '/auth/reset-password', { token, password: 'second-password' })).toMatchObject({ status: 200 });
    expect((await call(url, 'POST', '/auth/login', { email: 'ada@example.com', password: 'second-password' })).status).toBe(200);
    expect((await call(url, 'GET', '/__test/mails?to=nobody@example.com')).body).toEqual([]);
    expect((await call(url, 'GET', '/__test/mails')).body).toHaveLength(2);
    expect(await call(url, 'DELETE', '/__test/mails')).toEqual({ status: 204, body: undefined });
    expect(await call(url, 'GET', '/__test/mails')).toEqual({ status: 200, body: [] });

    // Bad input: a clear 4xx with a message.
    expect(await call(url, 'POST', '/__test/reset', { fixture: 'nope' })).toEqual({ status: 422, body: { message: 'Validation failed', errors: [{ field: 'fixture', message: 'must be one of: demo' }] } });
    expect(await call(url, 'POST', '/__test/reset', '{"fixture":')).toEqual({ status: 400, body: { message: 'Malformed JSON' } });
    expect((await call(url, 'PUT', '/__test/mails')).status).toBe(405);

    // A second reset: ids start at 1 again.
    expect((await call(url, 'POST', '/__test/reset')).status).toBe(204);
    expect((await call(url, 'POST', '/auth/register', { name: 'Bo', email: 'bo@example.com', password: 'first-password' })).body.user.id).toBe(1);
    expect(Number(port)).toBeGreaterThan(0);

    run.npm.kill('SIGTERM');
    expect(await run.exited).toEqual({ code: 0, signal: null });
    await waitUntil(() => serverProcesses(dir).length === 0, 'no process left', 10_000);
    expect(existsSync(dir)).toBe(false);
    // Still exactly that one line on stdout after the stop (npm's banner aside).
    expect(run.stdout().replace(BANNER, '')).toMatch(LINE);
  } finally {
    if (run.npm.exitCode === null) {
      run.npm.kill('SIGTERM');
      await run.exited;
    }
  }
}, 120_000);

it('on DATABASE_URL: refuses a database that holds tables; in an empty one, serves and drops all it made on SIGTERM', async () => {
  const full = await createTestDatabase({ empty: true });
  const db = new Client({ connectionString: full });
  await db.connect();
  try {
    await db.query('create table mine (id int)');
    const refused = runTestServer({ DATABASE_URL: full }, ['--silent']);
    expect(await refused.exited).toEqual({ code: 1, signal: null });
    expect(refused.stdout()).toBe('');
    expect(refused.stderr()).toContain('test-server: failed to start: DATABASE_URL must point at an empty database; its schema holds mine');
    await db.query('drop table mine');

    const run = runTestServer({ DATABASE_URL: full }, ['--silent']);
    const { url } = JSON.parse(await run.line) as { url: string };
    expect(run.stdout()).toMatch(LINE);
    expect((await call(url, 'POST', '/__test/reset', { fixture: 'demo' })).status).toBe(204);
    expect((await db.query('select count(*)::int as n from users')).rows).toEqual([{ n: 5 }]);
    run.npm.kill('SIGTERM');
    expect(await run.exited).toEqual({ code: 0, signal: null });
    const left = await db.query(`select relname from pg_class where relnamespace = current_schema()::regnamespace union all select proname from pg_proc where pronamespace = current_schema()::regnamespace`);
    expect(left.rows).toEqual([]);
  } finally {
    await db.end();
  }
}, 120_000);
