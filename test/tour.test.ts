import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildOpenApiDocument } from '../src/openapi/document';
import { freshCopy, npmStart, stopStarted, type Copy, type Started } from './support/npm-start';
import { run } from './support/run';

/**
 * What a newcomer pastes from the docs, run as pasted against `npm start` in a fresh copy of the
 * project on a fresh data directory: docs/api.md's curl tour, once on the empty database and once
 * more after `npm run seed` (which must name the URL the service really listens on). The README's
 * subscription client: test/tour-snippet.test.ts.
 *
 * The tour marks the status each step prints with a comment after it, `# → 201`, or
 * `# → 201 (11 times)` after a loop; `req` prints `→ <status>` on stderr for every request. The
 * one change made to the block is its first line, the service's address (the port is the system's
 * choice here, as other tests run beside this one). It runs in the project's folder with the
 * environment `npm start` has, as a newcomer pastes it: its `npm run set-role` steps and the mails
 * it reads (DATA_DIR/mail) are that service's.
 */
const root = join(__dirname, '..');
const API_LINE = 'API=http://localhost:3000';

/** The tour's shell block and the statuses its markers promise, in order. */
export function tourOf(markdown: string): { script: string; expected: number[] } {
  const section = markdown.slice(markdown.indexOf('## A tour with curl'));
  const block = /```sh\n([\s\S]*?)```/.exec(section.slice(0, section.indexOf('\n## ', 3)))?.[1];
  if (!block) throw new Error('docs/api.md: no ```sh block under "## A tour with curl"');
  const expected = [...block.matchAll(/#\s*→\s*(\d{3})(?:\s*\((\d+) times\))?\s*$/gm)].flatMap((m) => Array<number>(Number(m[2] ?? 1)).fill(Number(m[1])));
  return { script: block, expected };
}

const docs = readFileSync(join(root, 'docs', 'api.md'), 'utf8');
const tour = tourOf(docs);

let copy: Copy;
let server: Started;
let url: string;
const env = () => ({ ...process.env, NODE_ENV: 'development', DATA_DIR: copy.dataDir, DATABASE_URL: '', JWT_SECRET: '', LOG_LEVEL: 'info' });

beforeAll(async () => {
  copy = freshCopy('tour');
  // The lowest bcrypt cost, as the test server's (docs/testing.md): the tour hashes a dozen
  // passwords (registrations, logins, a change and a reset), which is not what it is about.
  server = npmStart(copy, { BCRYPT_COST: '4' });
  await server.ready;
  url = `http://localhost:${server.port()}`;
}, 120_000);

afterAll(() => stopStarted(server, copy), 60_000);

/** Runs the tour as pasted into a shell; every step's printed status, and what else it wrote. */
async function runTour() {
  expect(tour.script.split('\n')).toContain(API_LINE);
  const r = await run('bash', [], { input: tour.script.replace(API_LINE, `API=${url}`), cwd: copy.dir, env: env(), timeoutMs: 170_000 });
  const stderr = r.stderr.split('\n').filter(Boolean);
  const statuses = stderr.filter((l) => /^→ \d{3}$/.test(l)).map((l) => Number(l.slice(2)));
  const lines = r.stdout.split('\n').filter(Boolean);
  const json = lines.flatMap((l) => {
    try {
      return [JSON.parse(l) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
  return { ...r, statuses, otherStderr: stderr.filter((l) => !/^→ \d{3}$/.test(l)), lines, json };
}

function expectTourPasses(result: Awaited<ReturnType<typeof runTour>>) {
  // Every step printed the status written after it, in order, and nothing else went wrong.
  expect(result.statuses).toEqual(tour.expected);
  expect(result.otherStderr).toEqual([]);
  expect(result.code).toBe(0);
  // One answer per line: every line is JSON, or a plain value a step picked out (a slug, an id),
  // or what `npm run set-role` says it did.
  const plain = (line: string) => /^[\w.-]+$/.test(line) || /^\S+@example\.com is now (moderator|admin)$/.test(line);
  for (const line of result.lines) expect({ line, ok: plain(line) || (() => { try { JSON.parse(line); return true; } catch { return false; } })() }).toEqual({ line, ok: true });
  // Both role changes ran, and every area of the API answered: the trash (listed, restored from,
  // deleted from, purged) and administration among them.
  expect(result.lines.filter((l) => / is now (moderator|admin)$/.test(l))).toHaveLength(2);
  // The lists really go to a second page, in all three formats.
  const titles = (o: Record<string, unknown>) => (Array.isArray(o.titles) ? o.titles.length : 0);
  expect(result.json.some((o) => o.currentPage === 2 && titles(o) > 0)).toBe(true);
  expect(result.json.some((o) => o.hasMore === false && titles(o) > 0)).toBe(true);
  expect(result.json.some((o) => 'hasNextPage' in o && typeof o.prevCursor === 'string' && titles(o) > 0)).toBe(true);
}

describe('docs/api.md: the curl tour', () => {
  it('marks a status after every request it makes', () => {
    expect(tour.expected.length).toBeGreaterThan(20);
    const requests = tour.script.split('\n').filter((l) => /^\s*(?:\w+=\$\()?req\s/.test(l)).length;
    // Each `req` line's command ends at a marker (the loop's one request is marked after `done`).
    expect(tour.script.match(/#\s*→/g)!.length).toBe(requests);
  });

  it('requests every route of the OpenAPI document', () => {
    // Each request: its continuation lines joined, its method (-X, else POST with a body, else GET) and path.
    const commands = tour.script.replace(/\\\n/g, ' ').split('\n').filter((l) => /^\s*(?:\w+=\$\()?req\s/.test(l));
    const requested = commands.map((c) => ({ method: /-X (\w+)/.exec(c)?.[1] ?? (/ -d /.test(c) ? 'POST' : 'GET'), path: /\$API(\/[^\s"'?]*)/.exec(c)?.[1] ?? '' }));
    const doc = buildOpenApiDocument();
    const missing = Object.entries(doc.paths).flatMap(([path, item]) => {
      const pattern = new RegExp(`^${path.replace(/\{\w+\}/g, '[^/]+')}$`);
      return (['get', 'post', 'put', 'patch', 'delete'] as const)
        .filter((m) => (item as Record<string, unknown>)[m])
        .map((m) => `${m.toUpperCase()} ${path}`)
        .filter((op) => !requested.some((r) => op === `${r.method} ${path}` && pattern.test(r.path)));
    });
    expect(missing).toEqual([]);
  });

  it('runs as pasted on a freshly started service with an empty database', async () => {
    expectTourPasses(await runTour());
  }, 180_000);

  it('npm run seed, beside the running service, names the URL it really listens on', async () => {
    const r = await run('npm', ['run', 'seed', '--silent'], { cwd: copy.dir, env: env() });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toContain(`The service is running at ${url}. Try:`);
    expect(r.stdout).toContain(`curl -s -X POST ${url}/auth/login`);
    expect(r.stdout).toContain('admin@example.com');
    // The printed command works as printed.
    const login = /(curl -s -X POST .*)$/m.exec(r.stdout)![1];
    const answer = await run('bash', ['-c', login]);
    expect(JSON.parse(answer.stdout).user).toMatchObject({ email: 'admin@example.com', role: 'admin', name: 'Demo Admin' });
  }, 120_000);

  it('runs as pasted again after npm run seed', async () => {
    expectTourPasses(await runTour());
  }, 180_000);
});
