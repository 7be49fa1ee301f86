import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Transporter } from 'nodemailer';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../../config/config';
import { intervalJob, type BackgroundJob } from '../../core/jobs';
import type { Logger } from '../../core/logger';
import { transactionWithRetry } from '../../core/transaction';
import { EventListener } from '../../db/events';
import { sharedPeriod } from '../../db/jobs';
import { directUrlOf } from '../../db/orm';
import { OutboxMail } from './mail.entity';
import { claimNextMail, deleteSentMails, markMailFailed, markMailSent, type OutboxRow } from './mail.repository';
import type { CapturedMails } from './mail.capture';
import { plainTextMessage } from './plain-text';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/**
 * How long a worker may hold a claimed row before PostgreSQL ends its session and frees the row
 * for another instance: longer than one send can take (SMTP connect 10 s + greeting 10 s +
 * socket idle 30 s), so a live worker is never cut off mid-send.
 */
const CLAIM_TIMEOUT_MS = 2 * 60_000;
const MAX_BACKOFF_MS = 10 * 60_000;
/** Sent rows are kept this long (to answer "was it sent?"), without their text. */
const KEEP_SENT_MS = 24 * 60 * 60_000;
const CLEANUP_EVERY_MS = 10 * 60_000;

/**
 * The outbox: `enqueue` writes the message in the caller's unit of work, so it
 * is committed with the change that caused it; the worker sends it afterwards, retrying with
 * exponential backoff until the SMTP server accepts it. A send never affects an HTTP answer.
 *
 * What wakes the worker, so that an idle outbox costs the primary almost nothing:
 * the `mailQueued` NOTIFY that the insert's own transaction sends (a trigger on mail_outbox),
 * heard on the process's LISTEN connection (db/events.ts) by every instance's worker; `kick()`
 * in the enqueuing process; a timer for the next retry of a send that failed here; a drain when
 * the LISTEN connection comes back after a loss; and a slow safety poll (`mailPollMs`, 10 s) for
 * anything else (a retry whose sender died, a NOTIFY lost with the connection).
 */
export class MailService {
  private transporter?: Transporter;
  private readonly toFiles: boolean;
  private readonly worker: ReturnType<typeof intervalJob>;
  private active = false;
  private readonly listener: EventListener;
  private listenRetry: NodeJS.Timeout | undefined;
  /** The next retry of a send that failed in this process, and when it is due. */
  private retryTimer: NodeJS.Timeout | undefined;
  private retryAt = Infinity;
  /** A kick is waiting for its drain to start. */
  private drainWanted = false;
  readonly job: BackgroundJob;
  /** Deletes rows sent more than a day ago (also in the app's jobs; tests call its runNow()). */
  readonly cleanup: ReturnType<typeof intervalJob>;

  constructor(
    private readonly orm: MikroORM,
    private readonly config: Readonly<Config>,
    private readonly log: Logger,
    /** Set by the test server: mails are kept in memory instead of sent (mail.capture.ts). */
    private readonly capture?: CapturedMails,
  ) {
    this.toFiles = !config.smtpUrl && !capture;
    this.worker = intervalJob('mail-outbox', config.mailPollMs, () => this.drain(), (err) => log.error({ err }, 'mail outbox run failed'));
    this.cleanup = intervalJob(
      'mail-outbox-cleanup',
      CLEANUP_EVERY_MS,
      () => deleteSentMails(this.orm.em.fork(), KEEP_SENT_MS),
      (err) => log.warn({ err }, 'mail outbox cleanup failed'),
      { shared: sharedPeriod(orm) },
    );
    this.listener = new EventListener(directUrlOf(orm), (e) => e.type === 'mailQueued' && this.kick(), log, { onReconnect: () => this.kick() });
    this.job = {
      name: 'mail-outbox',
      start: () => {
        this.active = true;
        this.worker.start();
        this.listen();
        // Mails queued while no worker was running (a restart) are not announced again.
        this.kick();
      },
      stop: async () => {
        this.active = false;
        clearTimeout(this.listenRetry);
        clearTimeout(this.retryTimer);
        this.retryAt = Infinity;
        await this.listener.close();
        await this.worker.stop();
      },
    };
  }

  /**
   * Built on the first send, and nodemailer loaded then: most processes never send a mail, and
   * its ~35 modules would otherwise stay in the heap, which V8 lets grow to a multiple of what
   * stays alive.
   */
  private get transport(): Transporter {
    if (this.transporter) return this.transporter;
    /* eslint-disable @typescript-eslint/no-require-imports */
    const nodemailer = require('nodemailer') as typeof import('nodemailer');
    const SMTPTransport = (require('nodemailer/lib/smtp-transport') as typeof import('nodemailer/lib/smtp-transport')).default;
    /* eslint-enable @typescript-eslint/no-require-imports */
    this.transporter = this.config.smtpUrl
      ? // Built directly: createTransport(url) would drop the timeouts (a black-holed server must not hold the worker for minutes).
        nodemailer.createTransport(new SMTPTransport({ url: this.config.smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 }))
      : nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
    return this.transporter;
  }

  /** Adds the message to the caller's unit of work; it is sent once that is committed. */
  enqueue(em: EntityManager, message: MailMessage): OutboxMail {
    const row = em.create(OutboxMail, { to: message.to, subject: message.subject, text: message.text } as OutboxMail);
    em.persist(row);
    return row;
  }

  /** LISTEN for `mailQueued`; while the database cannot be reached, tried again every few seconds (the safety poll covers the gap). */
  private listen(): void {
    this.listener.start().catch((err) => {
      if (!this.active) return;
      this.log.warn({ err }, 'mail outbox: could not LISTEN; trying again in 5 s');
      this.listenRetry = setTimeout(() => this.active && this.listen(), 5_000);
      this.listenRetry.unref();
    });
  }

  /** A drain once a send that failed here is due again (the earliest such retry wins). */
  private wakeIn(ms: number): void {
    const at = Date.now() + ms;
    if (!this.active || at >= this.retryAt) return;
    clearTimeout(this.retryTimer);
    this.retryAt = at;
    this.retryTimer = setTimeout(() => {
      this.retryAt = Infinity;
      this.kick();
    }, ms + 20); // next_attempt_at is the database's clock: a little after it, not just before
    this.retryTimer.unref();
  }

  /** Call after the commit: delivers soon without waiting for the next poll (and after the response). */
  kick(): void {
    // Kicks before the next drain starts are all served by it (a burst of NOTIFYs is one drain).
    if (!this.active || this.drainWanted) return;
    this.drainWanted = true;
    setImmediate(() => {
      if (this.active) void this.worker.runNow();
      else this.drainWanted = false;
    });
  }

  /**
   * Delivers every mail due now, after the run in progress (if any) has finished: once it
   * resolves, each mail committed before the call has been handed over. The test server calls it
   * before it lists captured mails, so a mail queued by a request that has answered is listed.
   */
  flush(): Promise<void> {
    return this.worker.runNow();
  }

  /** Sends every due message, one at a time, until none is due (or the job stops). */
  async drain(): Promise<void> {
    this.drainWanted = false;
    while ((await this.sendNext()) && this.active);
  }

  /**
   * Exactly once across instances, however many share the database. One transaction per message: the row is claimed
   * with `FOR UPDATE SKIP LOCKED` (no other worker, here or on another instance, can take it
   * while we hold it), sent, and marked sent in the same transaction. An instance that dies
   * while holding a row releases it at once (PostgreSQL rolls the transaction back when the
   * connection drops), so a survivor sends it at its next poll with no lease to wait out; a
   * host that hangs instead is cut off by idle_in_transaction_session_timeout.
   *
   * The one window for a duplicate: a crash (or a lost database connection) after the SMTP
   * server accepted the message and before the commit of the mark. The row is then still unsent
   * and another worker sends it again. SMTP offers no way to ask "did you already get this?",
   * so at-least-once with this narrow window is the best an outbox can do (docs/deploy.md).
   *
   * Returns false when no message was due.
   */
  private async sendNext(): Promise<boolean> {
    return transactionWithRetry(this.orm.em, async (tx) => {
      const row = await claimNextMail(tx, CLAIM_TIMEOUT_MS);
      if (row) await this.deliver(tx, row);
      return row !== undefined;
    });
  }

  private async deliver(tx: EntityManager, row: OutboxRow): Promise<void> {
    try {
      if (this.capture) {
        this.capture.add({ to: row.to_address, subject: row.subject, text: row.text, sentAt: new Date().toISOString() });
        this.log.info({ mailId: row.id, subject: row.subject }, 'mail captured (test server)');
        await markMailSent(tx, row.id);
        return;
      }
      // The body as written (plain-text.ts): a token or a link is never cut by a transfer encoding.
      const info = await this.transport.sendMail(plainTextMessage({ from: this.config.mailFrom, to: row.to_address, subject: row.subject, text: row.text }, this.toFiles ? '\n' : '\r\n'));
      if (this.toFiles) {
        const dir = join(this.config.dataDir, 'mail');
        mkdirSync(dir, { recursive: true });
        const file = join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${row.id}.eml`);
        writeFileSync(file, (info as unknown as { message: Buffer }).message);
        this.log.info({ mailId: row.id, subject: row.subject, file }, 'mail written to file (no SMTP_URL)');
      } else {
        this.log.info({ mailId: row.id, subject: row.subject }, 'mail sent');
      }
      // The text carries reset secrets and verification tokens: once delivered, the database
      // keeps no copy. Same statement as the mark, so no sent row ever holds it.
      await markMailSent(tx, row.id);
    } catch (err) {
      const attempts = row.attempts + 1;
      const delay = Math.min(MAX_BACKOFF_MS, this.config.mailRetryBaseMs * 2 ** Math.min(attempts - 1, 20));
      this.log.warn({ mailId: row.id, attempts, retryInMs: delay, err: (err as Error).message }, 'mail send failed; will retry');
      this.wakeIn(delay);
      await markMailFailed(tx, row.id, attempts, String((err as Error).message ?? err).slice(0, 1000), Math.round(delay));
    }
  }
}
