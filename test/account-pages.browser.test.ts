import type { Browser, Page } from 'playwright-core';
import { describeInBrowser, launchChromium } from './support/browser';
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { uniqueEmail } from './support/factories';
import { startMailbox, type Mailbox, type ReceivedMail } from './support/mailbox';

/**
 * In a real browser (Debian's Chromium through playwright-core), from the mail in the SMTP sink
 * to a reset password and a verified email: the link is opened exactly as the mail gives it
 * (APP_URL is `http://app.localhost`, which Chromium resolves to the test service and, being a
 * localhost name, treats as a secure origin as it would an HTTPS deployment), the page
 * reads the token from the fragment, calls the API and shows its message. The pages must run
 * under their Content-Security-Policy without a violation and load nothing from elsewhere.
 */
describeInBrowser('test/account-pages.browser.test.ts', 'the pages behind the mail links, in Chromium', () => {
  let app: TestApp;
  let mailbox: Mailbox;
  let browser: Browser;
  let api: ReturnType<typeof clients>;

  beforeAll(async () => {
    mailbox = await startMailbox();
    app = await startTestApp({ SMTP_URL: mailbox.url, APP_URL: 'http://app.localhost' });
    api = clients(app.url);
    const port = new URL(app.url).port;
    browser = await launchChromium([`--host-resolver-rules=MAP app.localhost:80 127.0.0.1:${port}`]);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await mailbox?.close();
  });

  /** A fresh page that records what the browser complains about and every host it asks. */
  async function openPage() {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    const hosts = new Set<string>();
    page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('request', (r) => hosts.add(new URL(r.url()).host));
    page.on('requestfailed', (r) => problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`));
    return { page, problems, hosts, close: () => context.close() };
  }

  /** The link of the mail for `page`, as the mail gives it. */
  const linkOf = (mail: ReceivedMail, path: string) => {
    const line = mail.text!.split('\n').find((l) => l.startsWith(`http://app.localhost${path}#token=`));
    if (!line) throw new Error(`no ${path} link in:\n${mail.text}`);
    return line;
  };

  const statusOf = (page: Page) => page.locator('#status');

  it('the verification mail\'s link verifies the email and shows the API\'s message', async () => {
    const email = uniqueEmail('browser-verify');
    const registered = await api.rest('POST', '/auth/register', { body: { name: 'Browser', email, password: 'password123' } });
    expect(registered.status).toBe(201);
    const [mail] = await mailbox.waitFor(email, 'Verify your email');

    const { page, problems, hosts, close } = await openPage();
    try {
      await page.goto(linkOf(mail, '/verify-email'));
      await expect(statusOf(page).filter({ hasText: 'Email verified' }).waitFor({ timeout: 10_000 })).resolves.toBeUndefined();
      expect(await statusOf(page).getAttribute('class')).toBe('ok');
      // The token left the address bar once read.
      expect(page.url()).toBe('http://app.localhost/verify-email');
      expect(problems).toEqual([]);
      expect([...hosts]).toEqual(['app.localhost']);
    } finally {
      await close();
    }
    const me = await api.rest('GET', '/auth/me', { token: registered.body.token });
    expect(me.body.email_verified_at).toEqual(expect.any(String));
  });

  it('a verification link with a bad token shows the API\'s refusal and offers a field to paste the token', async () => {
    const { page, problems, close } = await openPage();
    try {
      await page.goto('http://app.localhost/verify-email#token=not-a-token');
      await statusOf(page).filter({ hasText: 'Invalid or expired token' }).waitFor({ timeout: 10_000 });
      expect(await statusOf(page).getAttribute('class')).toBe('error');
      expect(await page.locator('#form').isVisible()).toBe(true);
      // The console may report the 400 the page received; nothing else.
      expect(problems.filter((p) => !/status of 400/.test(p))).toEqual([]);
    } finally {
      await close();
    }
  });

  it('the reset mail\'s link opens a form that sets the new password, and shows the API\'s message', async () => {
    const email = uniqueEmail('browser-reset');
    expect((await api.rest('POST', '/auth/register', { body: { name: 'Browser', email, password: 'password123' } })).status).toBe(201);
    expect((await api.rest('POST', '/auth/forgot-password', { body: { email } })).status).toBe(200);
    const [mail] = await mailbox.waitFor(email, 'Reset your password');
    const link = linkOf(mail, '/reset-password');

    const { page, problems, hosts, close } = await openPage();
    try {
      await page.goto(link);
      // The code is filled in from the fragment, which is gone from the address bar.
      expect(await page.locator('#token').inputValue()).toBe(link.split('#token=')[1]);
      expect(page.url()).toBe('http://app.localhost/reset-password');

      // Too short first: the API's 422 is shown with its field error, and the form stays.
      await page.fill('#password', 'short');
      await page.click('button[type=submit]');
      await statusOf(page).filter({ hasText: 'Validation failed' }).waitFor({ timeout: 10_000 });
      expect(await page.locator('#errors li').allTextContents()).toEqual(['password must be at least 8 bytes']);
      expect(await page.locator('#form').isVisible()).toBe(true);

      await page.fill('#password', 'a brand new passphrase');
      await page.click('button[type=submit]');
      await statusOf(page).filter({ hasText: 'Password reset successfully' }).waitFor({ timeout: 10_000 });
      expect(await statusOf(page).getAttribute('class')).toBe('ok');
      expect(await page.locator('#form').isVisible()).toBe(false);
      expect(problems.filter((p) => !/status of 422/.test(p))).toEqual([]);
      expect([...hosts]).toEqual(['app.localhost']);
    } finally {
      await close();
    }
    expect((await api.rest('POST', '/auth/login', { body: { email, password: 'a brand new passphrase' } })).status).toBe(200);
    expect((await api.rest('POST', '/auth/login', { body: { email, password: 'password123' } })).status).toBe(401);
  });
});
