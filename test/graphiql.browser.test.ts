import type { Browser, Page } from 'playwright-core';
import { describeInBrowser, launchChromium } from './support/browser';
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { uniqueEmail } from './support/factories';
import { untilSubscribed } from './support/ws';
import { until } from './support/wait';

/**
 * GraphiQL at /graphql in a real browser (Debian's Chromium through playwright-core), as a
 * frontend developer first meets the API: the page and its scripts come from the service's own
 * packages, a query typed in the editor answers, and a subscription shows, live over WebSocket
 * on the same origin, a comment added through REST. Nothing is loaded from another host and the
 * console stays free of errors.
 */
describeInBrowser('test/graphiql.browser.test.ts', 'GraphiQL at /graphql, in Chromium', () => {
  let app: TestApp;
  let browser: Browser;
  let api: ReturnType<typeof clients>;
  let token: string;
  let postId: number;
  const title = `Seen in GraphiQL ${Date.now().toString(36)}`;

  beforeAll(async () => {
    app = await startTestApp();
    api = clients(app.url);
    const registered = await api.rest('POST', '/auth/register', { body: { name: 'Browser Reader', email: uniqueEmail('graphiql'), password: 'password123' } });
    expect(registered.status).toBe(201);
    token = registered.body.token;
    const created = await api.rest('POST', '/posts', { token, body: { title, body: 'A post for the IDE.' } });
    expect(created.status).toBe(201);
    postId = created.body.id;
    expect((await api.rest('PATCH', `/posts/${postId}/publish`, { token })).status).toBe(200);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  /**
   * GraphiQL with `document` in its editor (the page's `#query=` fragment), rendered and with
   * the schema loaded (its introspection answered); what the browser complains about and every
   * host and WebSocket it reaches are recorded.
   */
  async function openIde(document: string) {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    const hosts = new Set<string>();
    const sockets: string[] = [];
    const workers = new Set<string>();
    // Monaco only warns (console.warn) when a worker cannot start and then runs its code on the page.
    page.on('console', (m) => (m.type() === 'error' || m.type() === 'warning') && problems.push(`console: ${m.text()}`));
    page.on('worker', (w) => workers.add(new URL(w.url()).pathname));
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('request', (r) => hosts.add(new URL(r.url()).host));
    page.on('requestfailed', (r) => problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`));
    page.on('websocket', (ws) => sockets.push(ws.url()));
    page.on('response', (r) => r.status() >= 400 && problems.push(`${r.status()}: ${r.request().method()} ${new URL(r.url()).pathname}`));
    const introspected = page.waitForResponse((r) => new URL(r.url()).pathname === '/graphql' && r.request().method() === 'POST' && (r.request().postData() ?? '').includes('__schema'));
    await page.goto(`${app.url}/graphql#${new URLSearchParams({ query: document })}`);
    await page.locator('.graphiql-query-editor .monaco-editor').waitFor({ timeout: 20_000 });
    expect((await introspected).status()).toBe(200);
    /** The console's errors and failed answers (the page names its icon, so not even a /favicon.ico 404). */
    const errors = () => problems;
    return { page, errors, hosts, sockets, workers, close: () => context.close() };
  }

  const run = (page: Page) => page.locator('.graphiql-execute-button').click();
  const result = (page: Page) => page.locator('.result-window');
  /**
   * The result pane's text as its editor holds it (the rendered lines are only those in view).
   * GraphiQL puts the Monaco it loaded on `globalThis.__MONACO` (its own end-to-end tests read
   * the editors from there); each editor knows the element it lives in.
   */
  const shownJson = async (page: Page) =>
    JSON.parse(
      await page.locator('.result-window').evaluate((pane) => {
        type Editor = { getContainerDomNode(): unknown; getValue(): string };
        const monaco = (globalThis as unknown as { __MONACO: { editor: { getEditors(): Editor[] } } }).__MONACO;
        const within = pane as unknown as { contains(node: unknown): boolean };
        const editor = monaco.editor.getEditors().find((e) => within.contains(e.getContainerDomNode()));
        if (!editor) throw new Error('no editor in the result pane');
        return editor.getValue();
      }),
    );

  it('a query typed in the editor answers in the result pane', async () => {
    const { page, errors, hosts, workers, close } = await openIde(`query FirstPage {\n  posts(page: 1) {\n    total\n    data { id title user { name } }\n  }\n}\n`);
    try {
      const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/graphql' && (r.request().postData() ?? '').includes('FirstPage'));
      await run(page);
      expect((await answered).status()).toBe(200);
      await result(page).filter({ hasText: title }).waitFor({ timeout: 10_000 });
      const shown = await shownJson(page);
      expect(shown).toEqual({ data: { posts: { total: 1, data: [{ id: postId, title, user: { name: 'Browser Reader' } }] } } });
      expect(errors()).toEqual([]);
      expect([...hosts]).toEqual([new URL(app.url).host]);
      // The editor's GraphQL and JSON language services run in workers served by this origin
      // (Monaco starts the GraphQL one when it first needs it, which may be after the answer).
      await until(() => workers.size >= 3, "the editor's three workers to start");
      expect([...workers].sort()).toEqual(['/graphql/assets/editor.worker.js', '/graphql/assets/graphql.worker.js', '/graphql/assets/json.worker.js']);
    } finally {
      await close();
    }
  });

  it('a subscription shows, live, a comment added through REST', async () => {
    const { page, errors, hosts, sockets, close } = await openIde(`subscription LiveComments {\n  commentAdded(postId: ${postId}) {\n    id\n    body\n    user { name }\n  }\n}\n`);
    try {
      await run(page);
      // The page holds the subscription once the service registered it: a comment added next must reach it.
      await untilSubscribed(app, 1);
      const body = 'Pushed to the browser as soon as it committed';
      const added = await api.rest('POST', `/posts/${postId}/comments`, { token, body: { body } });
      expect(added.status).toBe(201);
      await result(page).filter({ hasText: body }).waitFor({ timeout: 10_000 });
      const shown = await shownJson(page);
      expect(shown).toEqual({ data: { commentAdded: { id: added.body.id, body, user: { name: 'Browser Reader' } } } });
      expect(sockets).toEqual([`${app.url.replace(/^http/, 'ws')}/graphql`]);
      expect(errors()).toEqual([]);
      expect([...hosts]).toEqual([new URL(app.url).host]);
    } finally {
      await close();
    }
  });
});
