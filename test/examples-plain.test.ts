import { chmodSync, mkdtempSync, readdirSync, rmSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshCopy, leftovers, npmStart, stopStarted, type Copy } from './support/npm-start';
import { examples, preparedExamples, run, summaryOf } from './support/examples';

/**
 * examples/ as docs/clients.md and docs/testing.md describe them for a team without the manifest:
 * the GraphQL example against a plain `npm start` sends the documents' text, and the integration
 * suite of examples/testing passes on `npm run test-server`. What the examples are:
 * test/examples.test.ts.
 */

beforeAll(async () => {
  // Built by tsc (test/support/examples.ts: once per run, whichever file asks first).
  await preparedExamples();
}, 450_000);

describe('examples/: typed clients generated from the schema and the OpenAPI document', () => {
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
      // A temporary folder of its own for that server: another file's test servers (one killed on
      // purpose, test/test-server.test.ts) leave theirs in the run's until the next start sweeps them.
      const tmp = mkdtempSync(join(tmpdir(), 'examples-plain-'));
      chmodSync(tmp, 0o755); // as root, PostgreSQL runs as `postgres`, and the server's cluster lives below
      const made = new Set<string>();
      const watcher = watch(tmp, (_event, name) => name && made.add(String(name)));
      try {
        // TAP, named: off a terminal Node's default is the spec reporter; the summary lines below are TAP's.
        const r = await run(process.execPath, ['--test', '--test-reporter=tap', 'dist/testing/api.test.js'], { env: { ...process.env, TMPDIR: tmp, BLOG_API_DIR: copy.dir, NODE_ENV: '', PORT: '', DATABASE_URL: '' }, timeoutMs: 120_000 });
        expect({ code: r.code, summary: r.stdout.split('\n').filter((l) => /^# (pass|fail|skipped|todo) /.test(l)) }).toEqual({ code: 0, summary: ['# pass 5', '# fail 0', '# skipped 0', '# todo 0'] });
        // No process of that server, and no directory of it; the control: it made one there.
        expect(leftovers(copy)).toEqual([]);
        expect([...made].some((n) => n.startsWith('blog-api-test-server-'))).toBe(true);
        expect(readdirSync(tmp).filter((n) => n.startsWith('blog-api-test-server-'))).toEqual([]);
      } finally {
        watcher.close();
        rmSync(tmp, { recursive: true, force: true });
      }
    }, 120_000);
  });
});
