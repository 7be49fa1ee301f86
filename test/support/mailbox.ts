import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import type { AddressInfo } from 'node:net';

/** A mail as parsed, with `source`: the message exactly as the SMTP client sent it (headers and body). */
export type ReceivedMail = ParsedMail & { source: string };

export interface Mailbox {
  port: number;
  url: string;
  messages: ReceivedMail[];
  /** Mails to `to` (optionally with `subject`) received so far. */
  to(to: string, subject?: string): ReceivedMail[];
  /** Waits until `count` mails match, then returns them. */
  waitFor(to: string, subject: string | undefined, count?: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

/**
 * A real SMTP server on 127.0.0.1 (no TLS, no auth) that keeps every mail it accepts, parsed.
 * `rcptDelayMs` slows each delivery before its data is sent, so a test can act while senders
 * are mid-queue; a sender that dies during the delay has delivered nothing.
 */
export async function startMailbox(port = 0, opts: { rcptDelayMs?: number } = {}): Promise<Mailbox> {
  const messages: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(_address, _session, callback) {
      if (opts.rcptDelayMs) setTimeout(() => callback(), opts.rcptDelayMs);
      else callback();
    },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', callback);
      stream.on('end', () => {
        const source = Buffer.concat(chunks);
        simpleParser(source)
          .then((mail) => {
            messages.push(Object.assign(mail, { source: source.toString('utf8') }));
            callback();
          })
          .catch(callback);
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const actual = ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port;
  const matching = (to: string, subject?: string) =>
    messages.filter((m) => recipients(m).includes(to.toLowerCase()) && (subject === undefined || m.subject === subject));
  return {
    port: actual,
    url: `smtp://127.0.0.1:${actual}`,
    messages,
    to: matching,
    async waitFor(to, subject, count = 1, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = matching(to, subject);
        if (found.length >= count) return found;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} "${subject}" mail(s) to ${to}; got ${found.length}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function recipients(mail: ParsedMail): string[] {
  const list = Array.isArray(mail.to) ? mail.to : mail.to ? [mail.to] : [];
  return list.flatMap((a) => a.value.map((v) => (v.address ?? '').toLowerCase()));
}

/** The 64-hex reset secret in a "Reset your password" mail (from its link). */
export function resetSecretOf(mail: ParsedMail): string {
  const m = /\/reset-password#token=([0-9a-f]{64})\b/.exec(mail.text ?? '');
  if (!m) throw new Error(`no reset link in: ${mail.text}`);
  return m[1];
}

/** The verification token in a "Verify your email" mail (from its link). */
export function verifyTokenOf(mail: ParsedMail): string {
  const m = /\/verify-email#token=([A-Za-z0-9_.-]+)/.exec(mail.text ?? '');
  if (!m) throw new Error(`no verify link in: ${mail.text}`);
  return m[1];
}

/** A port where nothing listens (bound, read, released). */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Fixed-window limits restart at window boundaries; a test that needs `needMs` inside one
 * window waits for the next one when the current is about to end.
 */
export async function awaitWindowRoom(windowMs: number, needMs: number): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < needMs) await new Promise((r) => setTimeout(r, left + 50));
}
