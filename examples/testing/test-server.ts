import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';

/**
 * Starts the service's throwaway test server (`npm run test-server` in its checkout) and stops it.
 * This is the whole of what a Jest or Vitest `globalSetup` does (docs/testing.md): spawn, read
 * the one JSON line from stdout, and on teardown send SIGTERM and wait for the exit; the server
 * then removes its database and its temporary directory itself.
 */
export interface TestServer {
  /** http://127.0.0.1:<port>: REST, GraphQL over HTTP (`${url}/graphql`) and the /__test routes. */
  url: string;
  /** ws://127.0.0.1:<port>/graphql: GraphQL subscriptions (graphql-transport-ws). */
  graphql: string;
  stop(): Promise<void>;
}

/** `serviceDir`: the service's checkout (BLOG_API_DIR, else the folder above examples/). */
export async function startTestServer(serviceDir = process.env.BLOG_API_DIR ?? resolve(process.cwd(), '..')): Promise<TestServer> {
  // --silent: npm's own banner (`> blog-api@1.0.0 test-server`) stays off stdout.
  const child = spawn('npm', ['run', '--silent', 'test-server'], { cwd: serviceDir, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const line = await new Promise<string>((done, fail) => {
    createInterface({ input: child.stdout! }).once('line', done);
    void exited.then((code) => fail(new Error(`npm run test-server exited (code ${code}) before it was ready`)));
  });
  const { url, graphql } = JSON.parse(line) as { url: string; graphql: string };
  return {
    url,
    graphql,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** What GET /__test/mails answers: oldest first, the text exactly as sent. */
export interface CapturedMail {
  to: string;
  subject: string;
  text: string;
  sentAt: string;
}

/** The /__test routes, for a test's beforeEach and for reading mail. */
export function testRoutes(url: string) {
  async function expectStatus(res: Response, status: number): Promise<Response> {
    if (res.status !== status) throw new Error(`${res.url}: expected ${status}, got ${res.status} ${await res.text()}`);
    return res;
  }
  return {
    /** Every table emptied, ids from 1; `demo`: the data of `npm run seed` on top. */
    async reset(fixture?: 'demo'): Promise<void> {
      await expectStatus(
        await fetch(`${url}/__test/reset`, fixture ? { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ fixture }) } : { method: 'POST' }),
        204,
      );
    },
    async mails(to?: string): Promise<CapturedMail[]> {
      const res = await expectStatus(await fetch(`${url}/__test/mails${to ? `?to=${encodeURIComponent(to)}` : ''}`), 200);
      return (await res.json()) as CapturedMail[];
    },
    async clearMails(): Promise<void> {
      await expectStatus(await fetch(`${url}/__test/mails`, { method: 'DELETE' }), 204);
    },
  };
}
