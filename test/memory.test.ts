/**
 * What a production process holds in memory, on the real process as `npm start` starts it:
 *
 * - It loads nothing it never serves: no GraphiQL (graphql/ide.ts, its bundler, its bundle), and
 *   the OpenAPI document's modules only once somebody asks for /openapi.json. A preload
 *   (test/support/loaded-modules.cjs) lists the CommonJS modules the process has loaded; the
 *   development process and the document, asked for, are the controls that it sees them.
 * - It gives memory back (src/core/heap.ts, with npm start's --expose-gc): before it listens, and
 *   once it has been idle for MEMORY_RELEASE_IDLE_MS after serving. Seen through V8's own figures
 *   in /metrics (prom-client's nodejs_heap_space_size_total_bytes): the young generation, grown by
 *   the start and by a burst of GraphQL pages, is back to its initial size. The control is the
 *   same process started without --expose-gc, whose start leaves the young generation grown.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCommand } from '../bench/baseline';
import { createTestDatabase } from './support/harness';
import { rest } from './support/client';
import { uniqueEmail } from './support/factories';
import { followStart, type FollowedStart } from './support/follow-start';
import { builtService } from './support/service-build';
import { settled, until } from './support/wait';

jest.setTimeout(120_000);

const checkout = join(__dirname, '..');
const METRICS_TOKEN = 'memory-test-metrics-token';

/** How `npm start` starts the service (package.json), as the bench reads it. */
const start = startCommand(checkout);
const startFlags = () => start.flags;

/** The run's one build of the service (npm start's dist/); data and the probe's lists in a scratch folder. */
let root: string;
let scratch: string;
beforeAll(() => {
  root = builtService();
  scratch = mkdtempSync(join(tmpdir(), 'blog-api-memory-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Service extends FollowedStart {
  child: ChildProcess;
  url: string;
  exited: Promise<unknown>;
}

async function stop(s: Service | undefined): Promise<void> {
  if (!s || s.child.exitCode !== null || s.child.signalCode !== null) return;
  s.child.kill('SIGTERM');
  await settled(s.exited, 'the service to exit on SIGTERM', 15_000).catch(() => {
    s.child.kill('SIGKILL');
    return s.exited;
  });
}

/** `node <nodeArgs> dist/src/main.js` on a database of its own, ready. */
async function startService(nodeArgs: string[], env: Record<string, string>): Promise<Service> {
  const dataDir = join(scratch, `.data-${Math.random().toString(36).slice(2)}`);
  mkdirSync(dataDir);
  const child = spawn(process.execPath, [...nodeArgs, join(root, 'dist', 'src', 'main.js')], {
    cwd: root,
    env: {
      ...start.env,
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      DATABASE_URL: await createTestDatabase(),
      DATA_DIR: dataDir,
      JWT_SECRET: 'memory-test-secret-that-is-long-enough-to-pass',
      // Production needs one; nothing here sends mail (a closed port, as the bench's).
      SMTP_URL: 'smtp://127.0.0.1:1',
      APP_URL: 'http://app.test',
      BCRYPT_COST: '4',
      AUTH_RATE_LIMIT_PER_MINUTE: '0',
      METRICS_TOKEN,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const followed = followStart(child);
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const service = { ...followed, child, exited, url: '' };
  await followed.ready.catch(async (err) => {
    await stop(service);
    throw err;
  });
  service.url = `http://127.0.0.1:${followed.port()}`;
  return service;
}

const PAGE_QUERY = '{ posts(page: 1) { total data { id title body createdAt user { id name } comments { id body user { id name } } commentsCount } } }';
const graphqlPage = (s: Service) =>
  fetch(`${s.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: PAGE_QUERY }) });

/** A page's worth of posts with comments, so the GraphQL page allocates what a real one does. */
async function fillPage(s: Service): Promise<void> {
  const { token } = (await rest(s.url, 'POST', '/auth/register', { body: { name: 'Memory', email: uniqueEmail('memory'), password: 'password123' } })).body;
  for (let i = 0; i < 20; i++) {
    const post = await rest(s.url, 'POST', '/posts', { token, body: { title: `Memory ${i}`, body: 'A body of a few hundred characters. '.repeat(12) } });
    expect(post.status).toBe(201);
    const comments = await Promise.all(Array.from({ length: 5 }, (_, j) => rest(s.url, 'POST', `/posts/${post.body.id}/comments`, { token, body: { body: `Comment ${j} `.repeat(10) } })));
    for (const c of comments) expect(c.status).toBe(201);
  }
}

/** V8's young generation (new space) as /metrics reports it, in MB. */
async function newSpaceMb(s: Service): Promise<number> {
  const res = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  const m = /^nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)/m.exec(await res.text());
  if (!m) throw new Error('no nodejs_heap_space_size_total_bytes{space="new"} in /metrics');
  return Number(m[1]) / 1024 / 1024;
}

/** 400 GraphQL pages, 25 at a time: a busy minute, in small. */
async function burst(s: Service): Promise<void> {
  for (let round = 0; round < 16; round++) {
    const answers = await Promise.all(Array.from({ length: 25 }, () => graphqlPage(s)));
    for (const a of answers) expect(a.status).toBe(200);
  }
}

/** The files of the CommonJS modules the process has loaded (loaded-modules.cjs writes them on SIGUSR2). */
async function loadedModules(s: Service, file: string): Promise<string[]> {
  rmSync(file, { force: true });
  s.child.kill('SIGUSR2');
  await until(() => existsSync(file), 'the list of loaded modules');
  return readFileSync(file, 'utf8').split('\n');
}

describe('a production process, as npm start starts it', () => {
  const probe = join(__dirname, 'support', 'loaded-modules.cjs');
  const development = /\/dist\/src\/graphql\/ide\.js$|node_modules\/(graphiql|@graphiql\/|esbuild|react|react-dom|monaco-editor|monaco-graphql|pino-pretty)\//;
  // The young generation V8 starts with is a few MB; the start and a burst grow it to tens.
  const INITIAL_MB = 8;
  const file = () => join(scratch, 'loaded-production.txt');
  let s: Service;
  let atStart: number;
  beforeAll(async () => {
    s = await startService(['--require', probe, ...startFlags()], { LOADED_MODULES_FILE: file(), MEMORY_RELEASE_IDLE_MS: '300', LOG_LEVEL: 'debug' });
    atStart = await newSpaceMb(s);
    await fillPage(s);
  });
  afterAll(() => stop(s));

  it('loads no GraphiQL, even when a browser asks for /graphql, and the OpenAPI document only once asked for', async () => {
    expect((await graphqlPage(s)).status).toBe(200);
    // A browser's request for the IDE: production answers it as a GraphQL request that accepts no JSON.
    expect((await fetch(`${s.url}/graphql`, { headers: { accept: 'text/html' } })).status).toBe(406);
    expect((await fetch(`${s.url}/graphql/assets/ide.js`)).status).toBe(404);
    const loaded = await loadedModules(s, file());
    expect(loaded.some((f) => f.endsWith('/dist/src/app.js'))).toBe(true);
    expect(loaded.filter((f) => development.test(f))).toEqual([]);
    expect(loaded.filter((f) => f.endsWith('/dist/src/openapi/document.js'))).toEqual([]);
    // The control: asked for, the document's modules are loaded, and the probe sees them.
    expect((await fetch(`${s.url}/openapi.json`)).status).toBe(200);
    expect((await loadedModules(s, file())).filter((f) => f.endsWith('/dist/src/openapi/document.js'))).toHaveLength(1);
  });

  it('gives memory back before it listens, and after a busy period once idle for MEMORY_RELEASE_IDLE_MS', async () => {
    expect(atStart).toBeLessThanOrEqual(INITIAL_MB);
    await burst(s);
    // Read right after the burst: a request too, so the idle period starts after it.
    expect(await newSpaceMb(s)).toBeGreaterThan(INITIAL_MB);
    const releases = () => s.output().match(/"msg":"idle: memory released"/g)?.length ?? 0;
    const before = releases();
    await until(() => releases() > before, 'the idle release after the burst');
    expect(await newSpaceMb(s)).toBeLessThanOrEqual(INITIAL_MB);
  });

  it('the controls: a development process serves GraphiQL from graphql/ide.ts; without --expose-gc the start leaves the young generation grown', async () => {
    const flags = startFlags();
    expect(flags).toContain('--expose-gc');
    const dev = await startService(['--require', probe, ...flags.filter((f) => f !== '--expose-gc')], { LOADED_MODULES_FILE: join(scratch, 'loaded-development.txt'), NODE_ENV: 'development' });
    try {
      expect(await newSpaceMb(dev)).toBeGreaterThan(INITIAL_MB);
      const page = await fetch(`${dev.url}/graphql`, { headers: { accept: 'text/html' } });
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect((await loadedModules(dev, join(scratch, 'loaded-development.txt'))).filter((f) => f.endsWith('/dist/src/graphql/ide.js'))).toHaveLength(1);
    } finally {
      await stop(dev);
    }
  });
});
