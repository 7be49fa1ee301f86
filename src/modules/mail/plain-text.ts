import type { SendMailOptions } from 'nodemailer';

/** RFC 5322: a line is at most 998 octets before its CRLF. */
const MAX_LINE_OCTETS = 998;

/**
 * The message as nodemailer should send it, with the body exactly as written: `7bit` (ASCII) or
 * `8bit` (UTF-8), never quoted-printable or base64.
 *
 * Left to itself, nodemailer encodes any text with a line over 76 characters as quoted-printable,
 * which breaks the line every 76 characters with `=` soft breaks. A verification token (a JWT) and
 * a link holding one are longer than that, so the raw message, an `.eml` file read as text, or a
 * client that shows the source would show them cut by `=`, and a token copied from there is
 * refused. Lines of up to 998 octets are valid as they are (RFC 5322, RFC 2045's 7bit and 8bit),
 * so the header block comes from nodemailer (address and subject encoding, Date, Message-ID) and
 * the body follows it untouched. A line too long even for that (none of the service's mails has
 * one) falls back to nodemailer's own encoding. `newline`: CRLF on the wire, LF for a file.
 */
export function plainTextMessage(m: { from: string; to: string; subject: string; text: string }, newline: '\r\n' | '\n' = '\r\n'): SendMailOptions {
  const lines = m.text.split(/\r?\n/);
  if (lines.some((line) => Buffer.byteLength(line) > MAX_LINE_OCTETS)) return m;
  // Loaded with the transport, on the first send (mail.service.ts says why).
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- because this function is synchronous and a static import would load nodemailer in processes that never send a mail
  const MimeNode = (require('nodemailer/lib/mime-node') as typeof import('nodemailer/lib/mime-node')).default;
  const node = new MimeNode('text/plain; charset=utf-8', { newline: 'windows' });
  node.setHeader({ from: m.from, to: m.to, subject: m.subject });
  // No content is set on the node, so nodemailer keeps this header instead of choosing its own.
  node.setHeader('Content-Transfer-Encoding', /^[\x00-\x7f]*$/.test(m.text) ? '7bit' : '8bit');
  const head = node.buildHeaders().split('\r\n');
  return { envelope: node.getEnvelope(), raw: [...head, '', ...lines].join(newline) };
}
