import { silentLogger } from '../src/core/logger';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser, uniqueEmail } from './support/factories';
import { freePort, resetSecretOf, startMailbox, verifyTokenOf, type Mailbox } from './support/mailbox';
import { query } from './support/accounts';
import { until as untilCondition } from './support/wait';

/** `until` with the label first, as this file reads. */
const until = <T>(label: string, condition: () => Promise<T>) => untilCondition(condition, label, { ms: 10_000 });


/** An app sending through a test SMTP server of its own, for one describe block. */
function withMailApp(use: (app: TestApp, mailbox: Mailbox) => void): void {
  let app: TestApp;
  let mailbox: Mailbox;
  beforeAll(async () => {
    mailbox = await startMailbox();
    app = await startTestApp({ SMTP_URL: mailbox.url });
    use(app, mailbox);
  });
  afterAll(async () => {
    await app.close();
    await mailbox.close();
  });
}

describe('mail outbox with the SMTP server down', () => {
  let app: TestApp;
  let mailbox: Mailbox | undefined;
  let port: number;
  // The outbox's own failures (a retry runs from a timer set inside the failed send's transaction).
  const errors: string[] = [];
  beforeAll(async () => {
    port = await freePort();
    const log = { ...silentLogger, error: (_o: unknown, msg?: string) => void errors.push(msg ?? String(_o)) };
    app = await startTestApp({ SMTP_URL: `smtp://127.0.0.1:${port}` }, { log });
  });
  afterAll(async () => {
    await app.close();
    await mailbox?.close();
  });

  it('the HTTP answer is unchanged, the send is retried with backoff, and the mail arrives once the server is up', async () => {
    const { user } = await buildUser(app);
    const api = clients(app.url);
    const res = await api.rest('POST', '/auth/forgot-password', { body: { email: user.email } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'If that email exists, a link was sent.' });

    const failed: { attempts: number; sent_at: unknown; last_error: string | null } = await until('a failed attempt', async () => {
      const rows = await query<{ attempts: number; sent_at: Date | null; last_error: string | null; next_attempt_at: Date }>(
        app,
        'select attempts, sent_at, last_error, next_attempt_at from mail_outbox where to_address = ?',
        [user.email],
      );
      return rows[0]?.attempts >= 2 ? rows[0] : null;
    });
    expect(failed.sent_at).toBeNull();
    expect(failed.last_error).toEqual(expect.any(String));

    mailbox = await startMailbox(port);
    const [mail] = await mailbox.waitFor(user.email, 'Reset your password', 1, 15_000);
    const secret = resetSecretOf(mail);
    const sent = await until('sent_at', async () => {
      const [row] = await query<{ sent_at: string | null; attempts: number; last_error: string | null }>(app, 'select sent_at, attempts, last_error from mail_outbox where to_address = ?', [user.email]);
      return row.sent_at ? row : null;
    });
    expect(sent.attempts).toBeGreaterThanOrEqual(3);
    expect(sent.last_error).toBeNull();
    expect(errors).toEqual([]);
    expect((await api.rest('POST', '/auth/reset-password', { body: { token: secret, password: 'password456' } })).status).toBe(200);
    // Delivered once, not once per attempt: the row is marked sent (after the server accepted it,
    // which the mailbox records before accepting), so no attempt is left to deliver it again.
    expect(mailbox.to(user.email)).toHaveLength(1);
  });
});

describe('mail outbox with several workers', () => {
  let app: TestApp;
  let mailbox: Mailbox;
  withMailApp((a, m) => ([app, mailbox] = [a, m]));

  it('rows claimed with skip locked are sent once each, however many drains run at once', async () => {
    const to = 'many@example.test';
    const em = app.orm.em.fork();
    for (let i = 0; i < 45; i++) app.built.services.mail.enqueue(em, { to, subject: `n${i}`, text: 'hello' });
    await em.flush();
    await Promise.all([1, 2, 3].map(() => app.built.services.mail.drain()));
    await mailbox.waitFor(to, undefined, 45);
    // Every row marked sent: no send is left in flight, so a duplicate would be in the mailbox now.
    await until('all 45 rows marked sent', async () => (await query<{ n: number }>(app, 'select count(*)::int as n from mail_outbox where to_address = ? and sent_at is null', [to]))[0].n === 0);
    const subjects = mailbox.to(to).map((m) => m.subject).sort();
    expect(subjects).toEqual(Array.from({ length: 45 }, (_, i) => `n${i}`).sort());
  });
});

describe('mail without SMTP_URL (development)', () => {
  let app: TestApp;
  const dataDir = mkdtempSync(join(tmpdir(), 'mail-eml-'));
  beforeAll(async () => {
    app = await startTestApp({ DATA_DIR: dataDir });
  });
  afterAll(async () => {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('writes each message as an .eml file under DATA_DIR/mail', async () => {
    const { user } = await buildUser(app);
    expect((await clients(app.url).rest('POST', '/auth/forgot-password', { body: { email: user.email } })).status).toBe(200);
    const dir = join(dataDir, 'mail');
    const file = await until('an .eml file', async () => (existsSync(dir) ? readdirSync(dir).find((f) => f.endsWith('.eml')) : undefined));
    const source = readFileSync(join(dir, file), 'utf8');
    const mail = await simpleParser(source);
    expect(mail.subject).toBe('Reset your password');
    const secret = resetSecretOf(mail);
    expect(mail.text).toContain(`http://app.test/reset-password#token=${secret}`);
    expect(JSON.stringify(mail.to)).toContain(user.email);
    // Readable as text: the body is as written, the link and the code each whole on a line.
    expect(source).toMatch(/^Content-Transfer-Encoding: 7bit$/m);
    const lines = source.split('\n');
    expect(lines).toContain(`http://app.test/reset-password#token=${secret}`);
    expect(lines).toContain(secret);
  });

  it('a verification token copied from the .eml file as it reads verifies the email', async () => {
    const email = uniqueEmail('eml');
    expect((await clients(app.url).rest('POST', '/auth/register', { body: { name: 'Eml', email, password: 'password123' } })).status).toBe(201);
    const dir = join(dataDir, 'mail');
    const source = await until('the verification .eml file', async () => {
      for (const f of readdirSync(dir).filter((f) => f.endsWith('.eml'))) {
        const text = readFileSync(join(dir, f), 'utf8');
        if (text.includes(`To: ${email}`) && text.includes('Subject: Verify your email')) return text;
      }
      return undefined;
    });
    // The link as the file shows it, copied as is.
    const link = source.split('\n').find((line) => line.startsWith('http://app.test/verify-email#token='))!;
    expect(link).toBeDefined();
    const token = link.slice(link.indexOf('#token=') + 7);
    expect(source.split('\n')).toContain(token);
    expect((await clients(app.url).rest('POST', `/auth/verify-email/${token}`)).body).toEqual({ message: 'Email verified' });
  });
});

describe('mail outbox after sending', () => {
  let app: TestApp;
  let mailbox: Mailbox;
  withMailApp((a, m) => ([app, mailbox] = [a, m]));

  const sentRow = (to: string, subject: string) =>
    until(`"${subject}" to ${to} marked sent`, async () => {
      const rows = await query<{ sent_at: Date | null }>(app, 'select sent_at from mail_outbox where to_address = ? and subject = ?', [to, subject]);
      return rows.length === 1 && rows[0].sent_at ? rows[0] : null;
    });

  it('keeps neither the reset secret nor the verification token once the mail is sent', async () => {
    const api = clients(app.url);
    const { user } = await buildUser(app);
    expect((await api.rest('POST', '/auth/forgot-password', { body: { email: user.email } })).status).toBe(200);
    const secret = resetSecretOf((await mailbox.waitFor(user.email, 'Reset your password'))[0]);
    await sentRow(user.email, 'Reset your password');

    const email = uniqueEmail('outbox');
    expect((await api.rest('POST', '/auth/register', { body: { name: 'Out', email, password: 'password123' } })).status).toBe(201);
    const token = verifyTokenOf((await mailbox.waitFor(email, 'Verify your email'))[0]);
    await sentRow(email, 'Verify your email');

    const everything = JSON.stringify(await query(app, 'select * from mail_outbox'));
    expect(everything).toContain(user.email);
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain(token);
    // The secret still works: only the copy in the outbox is gone.
    expect((await api.rest('POST', '/auth/reset-password', { body: { token: secret, password: 'password456' } })).status).toBe(200);
  });

  it('the cleanup job deletes rows sent more than a day ago, and only those', async () => {
    const em = app.orm.em.fork();
    for (const subject of ['old', 'recent', 'unsent']) app.built.services.mail.enqueue(em, { to: 'cleanup@example.test', subject, text: 'hello' });
    await em.flush();
    await mailbox.waitFor('cleanup@example.test', undefined, 3);
    await sentRow('cleanup@example.test', 'unsent');
    await query(app, `update mail_outbox set sent_at = now() - interval '25 hours' where to_address = 'cleanup@example.test' and subject = 'old'`);
    await query(app, `update mail_outbox set sent_at = now() - interval '23 hours' where to_address = 'cleanup@example.test' and subject = 'recent'`);
    await query(app, `update mail_outbox set sent_at = null, next_attempt_at = now() + interval '1 hour', created_at = now() - interval '3 days' where to_address = 'cleanup@example.test' and subject = 'unsent'`);
    await app.built.services.mail.cleanup.runNow();
    const left = await query<{ subject: string }>(app, `select subject from mail_outbox where to_address = 'cleanup@example.test' order by subject`);
    expect(left.map((r) => r.subject)).toEqual(['recent', 'unsent']);
  });
});

describe('mail bodies as sent', () => {
  let app: TestApp;
  let mailbox: Mailbox;
  withMailApp((a, m) => ([app, mailbox] = [a, m]));

  it('carry the token and the link unbroken, each on one line of the raw message (no quoted-printable, no base64)', async () => {
    const api = clients(app.url);
    const email = uniqueEmail('raw');
    expect((await api.rest('POST', '/auth/register', { body: { name: 'Raw', email, password: 'password123' } })).status).toBe(201);
    expect((await api.rest('POST', '/auth/forgot-password', { body: { email } })).status).toBe(200);
    const [verify] = await mailbox.waitFor(email, 'Verify your email');
    const [reset] = await mailbox.waitFor(email, 'Reset your password');

    for (const [mail, token, page] of [
      [verify, verifyTokenOf(verify), 'verify-email'],
      [reset, resetSecretOf(reset), 'reset-password'],
    ] as const) {
      const [head, body] = [mail.source.slice(0, mail.source.indexOf('\r\n\r\n')), mail.source.slice(mail.source.indexOf('\r\n\r\n') + 4)];
      expect(head).toMatch(/^Content-Transfer-Encoding: 7bit$/im);
      expect(head).toMatch(/^Content-Type: text\/plain; charset=utf-8$/im);
      const lines = body.split('\r\n');
      expect(lines).toContain(`http://app.test/${page}#token=${token}`);
      expect(lines).toContain(token);
      // No soft line breaks anywhere, and the parsed text is the source's body.
      expect(lines.filter((line) => line.endsWith('='))).toEqual([]);
      expect(mail.text!.trim()).toBe(body.replace(/\r\n/g, '\n').trim());
    }
    // A JWT is longer than the 76 characters nodemailer would otherwise fold at.
    expect(verifyTokenOf(verify).length).toBeGreaterThan(76);
    // Both work as copied from the source.
    expect((await api.rest('POST', `/auth/verify-email/${verifyTokenOf(verify)}`)).body).toEqual({ message: 'Email verified' });
    expect((await api.rest('POST', '/auth/reset-password', { body: { token: resetSecretOf(reset), password: 'password456' } })).body).toEqual({ message: 'Password reset successfully' });
  });
});
