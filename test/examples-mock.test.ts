import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { userExample } from '../src/openapi/examples';
import { carrying } from './support/npm-start';
import { bin, curlTour, examples, guard, logCaughtUp, preparedExamples, prismPort, run, summaryOf } from './support/examples';
import { until } from './support/wait';

/**
 * examples/ against Prism's mock server (`npm run mock`: answers from the OpenAPI document's
 * examples, for frontend teams without a service): the REST example runs on it, SIGTERM to npm's
 * pid stops it whole, and it answers docs/api.md's curl tour without reporting one answer of its
 * own that breaks the document. What the examples are, and what else holds them to the service:
 * test/examples.test.ts.
 */

beforeAll(async () => {
  // Built by tsc (test/support/examples.ts: once per run, whichever file asks first).
  await preparedExamples();
}, 450_000);

/** Prism's mock of rest/openapi.json on a free port; the mock needs no network: it may listen on loopback, nothing else. */
function startMock(): { prism: ChildProcess; log: () => string; exited: Promise<unknown> } {
  const prism = spawn(process.execPath, ['--require', guard, bin('@stoplight', 'prism-cli', 'dist', 'index.js'), 'mock', 'rest/openapi.json', '--port', '0'], {
    cwd: examples,
    env: { ...process.env, NO_COLOR: '1', NO_NETWORK_ALLOW: 'loopback' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  prism.stdout.setEncoding('utf8').on('data', (c) => (log += c));
  prism.stderr.setEncoding('utf8').on('data', (c) => (log += c));
  const exited = new Promise((r) => prism.on('exit', r));
  return { prism, log: () => log, exited };
}

describe('examples/: typed clients generated from the schema and the OpenAPI document', () => {
  it('the REST example runs against the Prism mock (npm run mock: answers from the document\'s examples)', async () => {
    const { prism, log, exited } = startMock();
    try {
      const port = await prismPort(prism, log);
      // The token it logs in with is the document's example: it must travel as a header.
      const r = await run(process.execPath, [join(examples, 'dist', 'rest', 'src', 'main.js')], { env: { ...process.env, API_URL: `http://127.0.0.1:${port}` }, timeoutMs: 60_000 });
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      expect(summaryOf(r.stdout)).toMatchObject({ user: { id: userExample.id, name: userExample.name, email: userExample.email }, post: { id: expect.any(Number), published: true } });
      expect(log()).not.toMatch(/NETWORK-ATTEMPT/);
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

  describe('Prism\'s mock server (npm run mock)', () => {
    it('answers the curl tour without a violation of the document in its own log', async () => {
      const { prism, log, exited } = startMock();
      try {
        const port = await prismPort(prism, log);
        const mock = `http://127.0.0.1:${port}`;
        const tour = await run('bash', [], { input: curlTour(mock, true), timeoutMs: 120_000 });
        const statuses = tour.stderr.split('\n').filter((l) => /^→ \d{3}$/.test(l)).map((l) => Number(l.slice(2)));
        expect(statuses.length).toBeGreaterThanOrEqual(25);
        // The public reads, whose answers carry the patterned ETag header.
        const tags = await Promise.all(['/posts', '/posts/1'].map(async (path) => (await fetch(mock + path)).headers.get('etag')));

        await logCaughtUp(mock, log);
        const violations = log().split('\n').filter((l) => /Violation:/.test(l)).map((l) => l.slice(l.indexOf('Violation:') + 11));
        expect(log()).not.toMatch(/NETWORK-ATTEMPT/);
        expect(violations.filter((v) => !v.startsWith('request'))).toEqual([]);
        for (const tag of tags) expect(tag).toMatch(/^"[^"]*"$/);
      } finally {
        prism.kill('SIGTERM');
        await exited;
      }
    }, 200_000);
  });
});
