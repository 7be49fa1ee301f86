/** A mail as the throwaway test server keeps it: the text exactly as it would have been sent. */
export interface CapturedMail {
  to: string;
  subject: string;
  text: string;
  /** ISO 8601, when the outbox delivered it. */
  sentAt: string;
}

/**
 * Delivery into memory instead of SMTP or files (the test server's mode, `npm run test-server`):
 * the outbox still queues, claims and marks each mail, so what a test reads went through the
 * same path a real send takes; only the last step differs.
 */
export class CapturedMails {
  private readonly mails: CapturedMail[] = [];

  add(mail: CapturedMail): void {
    this.mails.push(mail);
  }

  /** Oldest first; only those to `to` when given (addresses compared without case). */
  list(to?: string): CapturedMail[] {
    const wanted = to?.toLowerCase();
    return this.mails.filter((m) => wanted === undefined || m.to.toLowerCase() === wanted).map((m) => ({ ...m }));
  }

  clear(): void {
    this.mails.length = 0;
  }
}
