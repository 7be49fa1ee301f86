import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freshCopy, npmStart, stopStarted, waitUntil, type Copy, type Started } from './support/npm-start';
import { run } from './support/run';

/**
 * What a newcomer pastes from the README, run as pasted against `npm start` in a fresh copy of the
 * project on a fresh data directory: the subscription client, on the Node the tests run on; and
 * the service.json `npm start` writes for the scripts beside it is gone once it stops. (The curl
 * tour of docs/api.md: test/tour.test.ts.)
 */
const root = join(__dirname, '..');

let copy: Copy;
let server: Started;
let url: string;

beforeAll(async () => {
  copy = freshCopy('tour-snippet');
  server = npmStart(copy);
  await server.ready;
  url = `http://localhost:${server.port()}`;
}, 120_000);

afterAll(() => stopStarted(server, copy), 60_000);

describe('README.md: the subscription client', () => {
  const section = readFileSync(join(root, 'README.md'), 'utf8').split('## Live updates')[1];
  const snippet = /```js\n([\s\S]*?)```/.exec(section)![1];
  const file = () => join(copy.dir, 'subscribe.mjs');
  const request = async (method: string, path: string, body?: unknown, token?: string) => {
    const res = await fetch(url + path, {
      method,
      headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return (await res.json()) as Record<string, any>;
  };

  beforeAll(() => {
    expect(snippet).toContain("url: 'ws://localhost:3000/graphql'");
    writeFileSync(file(), snippet.replace('ws://localhost:3000/graphql', `ws://localhost:${server.port()}/graphql`));
  });

  it('refuses a missing post with its error, not as a normal end', async () => {
    const r = await run(process.execPath, [file()], { cwd: copy.dir, env: { ...process.env, POST_ID: '2147483647' }, timeoutMs: 30_000 });
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 1, stdout: '', stderr: 'refused: NOT_FOUND Post not found\n' });
  }, 60_000);

  it('prints each new comment of the post, then done when the post is trashed', async () => {
    const email = `snippet-${Date.now()}@example.com`;
    const { token } = await request('POST', '/auth/register', { name: 'Snippet', email, password: 'correct horse battery' });
    const post = await request('POST', '/posts', { title: 'Followed', body: 'Comments wanted.' }, token);
    const child = spawn(process.execPath, [file()], { cwd: copy.dir, env: { ...process.env, POST_ID: String(post.id), TOKEN: token } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      // Comment until one arrives: the first may come before the subscription is set up.
      await waitUntil(() => {
        if (!stdout.includes('comment:')) void request('POST', `/posts/${post.id}/comments`, { body: 'Hello there' }, token);
        return stdout.includes('comment:');
      }, 'a comment to arrive', 20_000);
      await request('DELETE', `/posts/${post.id}`, undefined, token);
      expect(await exited).toBe(0);
    } finally {
      child.kill();
    }
    const lines = stdout.split('\n').filter(Boolean);
    expect(lines.at(-1)).toBe('done: the post was trashed or deleted');
    for (const line of lines.slice(0, -1)) expect(JSON.parse(line.replace(/^comment: /, ''))).toMatchObject({ body: 'Hello there', user: { name: 'Snippet' } });
    expect(stderr).toBe('');
  }, 60_000);

  it('npm start removes service.json when it stops', async () => {
    expect(existsSync(join(copy.dataDir, 'service.json'))).toBe(true);
    server.npm.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(join(copy.dataDir, 'service.json'))).toBe(false);
  }, 60_000);
});
