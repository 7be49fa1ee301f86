import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';

/**
 * The pages the mails' links open: GET /reset-password and GET /verify-email, as served: their
 * headers, their files, their methods.
 */
let app: TestApp;
let api: ReturnType<typeof clients>;
beforeAll(async () => {
  app = await startTestApp();
  api = clients(app.url);
});
afterAll(() => app.close());

const PAGES = [
  { path: '/reset-password', api: "'/auth/reset-password'", fields: ['token', 'password'] },
  { path: '/verify-email', api: "'/auth/verify-email/'", fields: ['token'] },
];

/** Every src/href of the page that is fetched: scripts, style sheets (the icon is an empty `data:` one, so the browser asks for no /favicon.ico). */
const assetsOf = (html: string) => [...html.matchAll(/\s(?:src|href)="([^"]+)"/g)].map((m) => m[1]).filter((url) => url !== 'data:,');

describe.each(PAGES)('GET $path', (page) => {
  it('is an HTML page with the document security headers: scripts from this origin only, nothing inline, no framing', async () => {
    const res = await api.rest('GET', page.path, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html; charset=utf-8/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("form-action 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-eval|https?:|\*/);
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cross-origin-opener-policy')).toBe('same-origin');

    // No inline script a strict CSP would block: every <script> has a src and no body, no on*= handlers.
    for (const tag of res.text.match(/<script\b[^>]*>[\s\S]*?<\/script>/g) ?? []) expect(tag).toMatch(/^<script src="\/[^"]+"><\/script>$/);
    expect(res.text).not.toMatch(/\son[a-z]+\s*=/i);
    expect(res.text).not.toMatch(/https?:\/\//);
    for (const field of page.fields) expect(res.text).toContain(`id="${field}"`);
    expect(res.text).toContain('role="status"');
  });

  it('loads only files of this origin, each served with its type and the document headers', async () => {
    const res = await api.rest('GET', page.path);
    const assets = assetsOf(res.text);
    expect(assets).toEqual(expect.arrayContaining(['/pages/assets/account.js', '/pages/assets/account.css']));
    for (const asset of assets) {
      expect(asset.startsWith('/')).toBe(true);
      const file = await fetch(app.url + asset);
      expect({ asset, status: file.status }).toEqual({ asset, status: 200 });
      expect(file.headers.get('content-type')).toMatch(asset.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      expect(file.headers.get('content-security-policy')).toContain("script-src 'self';");
      const text = await file.text();
      if (asset.endsWith('.js')) {
        // It reads the token from the fragment, calls this operation of the API and shows its message as text.
        expect(text).toContain('location.hash');
        expect(text).toContain(page.api);
        expect(text).toContain('textContent');
        expect(text).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/);
      }
    }
  });

  it('answers HEAD like GET, and 405 with Allow for other methods', async () => {
    const head = await fetch(app.url + page.path, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toMatch(/^text\/html/);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const res = await api.rest(method, page.path, { body: {} });
      expect({ method, status: res.status, body: res.body }).toEqual({ method, status: 405, body: { message: 'Method not allowed' } });
      expect(res.headers.get('allow')).toBe('GET, HEAD');
    }
  });
});

it('an unknown file under /pages/assets is 404 Not found, and so is a path out of it', async () => {
  for (const path of ['/pages/assets/other.js', '/pages/assets/..%2F..%2Fpackage.json', '/pages/assets/../../package.json']) {
    const res = await fetch(app.url + path);
    expect({ path, status: res.status }).toEqual({ path, status: 404 });
    expect(await res.json()).toEqual({ message: 'Not found' });
  }
  expect((await fetch(app.url + '/pages/assets/account.js', { method: 'POST' })).status).toBe(405);
});
