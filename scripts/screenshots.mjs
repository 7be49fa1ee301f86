// `npm run screenshots`: renders /docs and /graphql (with a query run in GraphiQL) in headless
// Chromium and saves PNGs to docs/screenshots/. Starts its own service over a fresh, seeded
// embedded database, or uses a running one with BASE_URL=http://127.0.0.1:3000.
//
// Nothing leaves the machine: DNS resolves only the service's host, every request the page makes
// is checked over the DevTools protocol (anything not for the service is failed and reported),
// and Chromium's own background traffic is switched off by flags.
//
// Needs Chromium (Debian: `apt-get install -y chromium`; or CHROMIUM_PATH). The DevTools protocol
// client is Node's own WebSocket.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, 'docs', 'screenshots');
const WIDTH = 1400;
const HEIGHT = 900;

function fail(message) {
  process.stderr.write(`screenshots: ${message}\n`);
  process.exit(1);
}

function findChromium() {
  const candidates = process.env.CHROMIUM_PATH ? [process.env.CHROMIUM_PATH] : ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
  const found = candidates.find((p) => existsSync(p));
  if (!found) {
    fail(
      `Chromium not found (looked at ${candidates.join(', ')}).\n` +
        '  Install it (Debian/Ubuntu: `sudo apt-get install -y chromium`) or set CHROMIUM_PATH to a Chromium/Chrome binary.',
    );
  }
  return found;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitUntil(what, fn, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

function run(cmd, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('close', (code) => (code === 0 ? resolve(output) : reject(new Error(`${cmd} ${args.join(' ')} failed:\n${output}`))));
  });
}

/** A fresh data dir, seeded, and the service on a free port; returns its URL and a stop function. */
/** Whether the service holds a commentAdded subscription, by its /metrics gauge. */
async function subscriptionsHeld(url) {
  const token = process.env.BASE_URL ? process.env.METRICS_TOKEN : undefined;
  const res = await fetch(`${url}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  if (!res.ok) fail(`/metrics answered ${res.status} (with BASE_URL, set METRICS_TOKEN to the service's)`);
  return /^graphql_subscriptions_active\{field="commentAdded"\} [1-9]/m.test(await res.text());
}

async function startService() {
  if (!existsSync(join(root, 'dist', 'src', 'main.js'))) fail('dist/ is missing: run `npm run build` first (the npm script does).');
  const dataDir = mkdtempSync(join(tmpdir(), 'blog-api-screens-'));
  chmodSync(dataDir, 0o755); // as root, PostgreSQL runs as `postgres` and must enter it
  const port = await freePort();
  const env = { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', NODE_ENV: 'development', LOG_LEVEL: 'warn', DATABASE_URL: '', BCRYPT_COST: '10' };
  process.stdout.write('seeding a fresh database…\n');
  await run(process.execPath, [join(root, 'dist', 'scripts', 'seed.js')], env);
  const child = spawn(process.execPath, [join(root, 'dist', 'src', 'main.js')], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntil('the service to be ready', async () => child.exitCode === null && (await fetch(`${url}/readyz`)).ok, 60_000);
  } catch (err) {
    child.kill('SIGTERM');
    fail(`the service did not start: ${err.message}\n${stderr}`);
  }
  return {
    url,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(15_000)]);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A minimal DevTools protocol client over the browser's WebSocket. */
class Cdp {
  constructor(ws) {
    this.ws = ws;
    this.nextId = 1;
    this.pending = new Map();
    this.listeners = [];
    ws.addEventListener('message', (ev) => {
      const msg = JSON.parse(typeof ev.data === 'string' ? ev.data : Buffer.from(ev.data).toString());
      if (msg.id && this.pending.has(msg.id)) {
        const { resolve, reject } = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.error) reject(new Error(`${msg.error.message} (${msg.error.code})`));
        else resolve(msg.result);
      } else if (msg.method) {
        for (const l of this.listeners) l(msg);
      }
    });
  }
  static connect(url) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      ws.addEventListener('open', () => resolve(new Cdp(ws)));
      ws.addEventListener('error', () => reject(new Error(`cannot connect to ${url}`)));
    });
  }
  send(method, params = {}, sessionId) {
    const id = this.nextId++;
    this.ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }
  on(fn) {
    this.listeners.push(fn);
  }
  close() {
    this.ws.close();
  }
}

async function launchChromium(binary, allowedHost) {
  const profile = mkdtempSync(join(tmpdir(), 'blog-api-chromium-'));
  const args = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    `--user-data-dir=${profile}`,
    '--no-default-browser-check',
    '--disable-default-apps',
    '--disable-extensions',
    '--disable-domain-reliability',
    '--disable-client-side-phishing-detection',
    '--disable-features=OptimizationHints,MediaRouter,Translate,AutofillServerCommunication,CertificateTransparencyComponentUpdater',
    '--no-pings',
    '--hide-scrollbars',
    '--disable-dev-shm-usage',
    // Belt and braces: only the service's host resolves; every other name fails before any packet.
    `--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE ${allowedHost}`,
    `--window-size=${WIDTH},${HEIGHT}`,
    '--remote-debugging-address=127.0.0.1',
    '--remote-debugging-port=0',
    'about:blank',
  ];
  const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const wsUrl = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Chromium did not start:\n${stderr}`)), 30_000);
    child.stderr.on('data', (c) => {
      stderr += c;
      const m = stderr.match(/DevTools listening on (ws:\/\/\S+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on('exit', (code) => reject(new Error(`Chromium exited (${code}):\n${stderr}`)));
  });
  return {
    wsUrl,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(5_000)]);
      // Chromium's helpers may still be writing into the profile for a moment.
      try {
        rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
      } catch {
        process.stderr.write(`screenshots: could not remove ${profile}\n`);
      }
    },
  };
}

/** One tab: every request it makes is checked against the service's origin. */
async function openPage(cdp, origin, blocked) {
  const { targetId } = await cdp.send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await cdp.send('Target.attachToTarget', { targetId, flatten: true });
  const loads = [];
  cdp.on((msg) => {
    if (msg.sessionId !== sessionId) return;
    if (msg.method === 'Fetch.requestPaused') {
      const { requestId, request } = msg.params;
      const local = request.url.startsWith(origin + '/') || request.url === origin || request.url.startsWith('data:') || request.url.startsWith('blob:');
      if (local) cdp.send('Fetch.continueRequest', { requestId }, sessionId).catch(() => undefined);
      else {
        blocked.push(request.url);
        cdp.send('Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' }, sessionId).catch(() => undefined);
      }
    }
    if (msg.method === 'Page.loadEventFired') loads.splice(0).forEach((r) => r());
  });
  await cdp.send('Fetch.enable', { patterns: [{ urlPattern: '*' }] }, sessionId);
  await cdp.send('Page.enable', {}, sessionId);
  await cdp.send('Runtime.enable', {}, sessionId);
  await cdp.send('Emulation.setDeviceMetricsOverride', { width: WIDTH, height: HEIGHT, deviceScaleFactor: 1, mobile: false }, sessionId);

  const evaluate = async (expression) => {
    const r = await cdp.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, sessionId);
    if (r.exceptionDetails) throw new Error(r.exceptionDetails.text);
    return r.result.value;
  };
  return {
    evaluate,
    async goto(url) {
      const loaded = new Promise((r) => loads.push(r));
      await cdp.send('Page.navigate', { url }, sessionId);
      await Promise.race([loaded, sleep(30_000)]);
    },
    waitFor: (what, expression, timeoutMs) => waitUntil(what, () => evaluate(expression), timeoutMs),
    async screenshot(file) {
      const { data } = await cdp.send('Page.captureScreenshot', { format: 'png' }, sessionId);
      writeFileSync(file, Buffer.from(data, 'base64'));
      process.stdout.write(`wrote ${file.replace(root + '/', '')}\n`);
    },
  };
}

/** The seeded admin's token when the service has REST login (headers for GraphiQL), else null. */
async function adminHeaders(base) {
  try {
    const res = await fetch(`${base}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'admin@example.com', password: 'demo-password' }),
    });
    if (!res.ok) return null;
    const { token } = await res.json();
    return token ? JSON.stringify({ Authorization: `Bearer ${token}` }, null, 2) : null;
  } catch {
    return null;
  }
}

/** A query that shows real data: the posts list when the schema has it, and the caller. */
async function pickQuery(base) {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ __schema { queryType { fields { name } } } }' }),
  });
  const fields = ((await res.json()).data?.__schema.queryType.fields ?? []).map((f) => f.name);
  const me = '  # the caller (null without an Authorization header)\n  me { name role }\n';
  if (!fields.includes('posts')) return `query Me {\n${me}}\n`;
  return `# Newest published posts first, with their authors
query LatestPosts {
${me}  posts(page: 1, published: true) {
    total
    lastPage
    data {
      id
      title
      user { name }
      commentsCount
    }
  }
}
`;
}

/** A published post to comment on, when the service has posts. */
async function firstPostId(base) {
  try {
    const res = await fetch(`${base}/posts?published=true`);
    return res.ok ? (await res.json()).data?.[0]?.id ?? null : null;
  } catch {
    return null;
  }
}

async function main() {
  const chromium = findChromium();
  const service = process.env.BASE_URL ? { url: process.env.BASE_URL.replace(/\/+$/, ''), stop: async () => undefined } : await startService();
  const origin = new URL(service.url).origin;
  const blocked = [];
  let browser;
  try {
    browser = await launchChromium(chromium, new URL(service.url).hostname);
    const cdp = await Cdp.connect(browser.wsUrl);
    mkdirSync(outDir, { recursive: true });

    const docs = await openPage(cdp, origin, blocked);
    await docs.goto(`${service.url}/docs`);
    await docs.waitFor('Swagger UI to render the operations', `document.querySelectorAll('.opblock').length > 10`);
    await sleep(500);
    await docs.screenshot(join(outDir, 'docs.png'));
    // One operation opened, to show parameters, the paginate choice and the documented answers.
    await docs.evaluate(`(() => { const el = document.querySelector('#operations-posts-listPosts .opblock-summary-control') || document.querySelector('#operations-posts-listPosts .opblock-summary'); el.click(); return true; })()`);
    await docs.waitFor('the operation to open', `!!document.querySelector('#operations-posts-listPosts .responses-wrapper')`);
    await docs.evaluate(`(() => { document.querySelector('#operations-posts-listPosts').scrollIntoView(); window.scrollBy(0, -10); return true; })()`);
    await sleep(500);
    await docs.screenshot(join(outDir, 'docs-operation.png'));

    const query = await pickQuery(service.url);
    const headers = await adminHeaders(service.url);
    const ide = await openPage(cdp, origin, blocked);
    const fragment = new URLSearchParams({ query, ...(headers ? { headers } : {}) }).toString();
    await ide.goto(`${service.url}/graphql#${fragment}`);
    await ide.waitFor('GraphiQL to render', `!!document.querySelector('.graphiql-execute-button') && !!document.querySelector('.graphiql-query-editor .monaco-editor')`);
    await sleep(1000); // the schema (introspection) loads after the first paint
    await ide.evaluate(`(() => { document.querySelector('.graphiql-execute-button').click(); return true; })()`);
    await ide.waitFor('the query result', `(document.querySelector('.result-window') || {}).innerText?.includes('"data"')`);
    await sleep(500);
    await ide.screenshot(join(outDir, 'graphiql.png'));

    // A live subscription: GraphiQL holds it over WebSocket while comments arrive through REST.
    const live = headers && (await firstPostId(service.url));
    if (live) {
      const token = JSON.parse(headers).Authorization;
      const subscription = `# Live over WebSocket: comments appear as added\nsubscription LiveComments {\n  commentAdded(postId: ${live}) {\n    id\n    body\n    createdAt\n    user { name }\n  }\n}\n`;
      const sub = await openPage(cdp, origin, blocked);
      await sub.goto(`${service.url}/graphql#${new URLSearchParams({ query: subscription, headers }).toString()}`);
      await sub.waitFor('GraphiQL to render', `!!document.querySelector('.graphiql-execute-button') && !!document.querySelector('.graphiql-query-editor .monaco-editor')`);
      await sleep(1000);
      await sub.evaluate(`(() => { document.querySelector('.graphiql-execute-button').click(); return true; })()`);
      // Nothing in the page says the subscription is held until an event arrives: the service's
      // /metrics does (open to all in development; METRICS_TOKEN when BASE_URL's service has one).
      await waitUntil('the service to hold the subscription', () => subscriptionsHeld(service.url), 20_000);
      for (const body of ['First!', 'A live comment, pushed to the IDE as soon as it committed']) {
        const res = await fetch(`${service.url}/posts/${live}/comments`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: token }, body: JSON.stringify({ body }) });
        if (res.status !== 201) fail(`adding a comment answered ${res.status}`);
        // Monaco wraps a long line in the pane: its text is compared with the whitespace folded.
        await sub.waitFor('the comment in the result pane', `((document.querySelector('.result-window') || {}).innerText || '').replace(/\\s+/g, ' ').includes(${JSON.stringify(body)})`);
      }
      await sleep(500);
      await sub.screenshot(join(outDir, 'graphiql-subscription.png'));
    }

    cdp.close();
  } finally {
    await browser?.stop();
    await service.stop();
  }
  if (blocked.length) fail(`the pages tried to reach outside the service (blocked):\n  ${[...new Set(blocked)].join('\n  ')}`);
  process.stdout.write('no request left the machine\n');
}

main().catch((err) => fail(err.stack ?? String(err)));
