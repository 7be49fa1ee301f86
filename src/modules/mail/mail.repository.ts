import type { EntityManager } from '@mikro-orm/postgresql';
import { runStatement, sql } from '../../db/statements';

/**
 * The mail outbox's statements (mail.service.ts; a mail is queued as an entity, in its caller's
 * unit of work); the SQL of each is in mail.repository.sql (npm run sql).
 */

export interface OutboxRow {
  id: number;
  to_address: string;
  subject: string;
  text: string;
  attempts: number;
}

/**
 * The next due mail, claimed for the transaction `tx` (`for update skip locked`: no other worker
 * can take it meanwhile), whose session PostgreSQL ends if it stays idle `claimTimeoutMs`.
 */
export async function claimNextMail(tx: EntityManager, claimTimeoutMs: number): Promise<OutboxRow | undefined> {
  await runStatement(tx, sql`select set_config('idle_in_transaction_session_timeout', ${String(claimTimeoutMs)}, true)`);
  const [row] = await runStatement<OutboxRow>(tx, sql`select id, to_address, subject, text, attempts from mail_outbox
    where sent_at is null and next_attempt_at <= now()
    order by next_attempt_at, id limit 1 for update skip locked`);
  return row;
}

/** Marks a mail sent and drops its text, in one statement: no sent row ever holds a secret. */
export async function markMailSent(tx: EntityManager, id: number): Promise<void> {
  await runStatement(tx, sql`update mail_outbox set sent_at = now(), attempts = attempts + 1, last_error = null, text = '' where id = ${id}`);
}

/** Records a failed send and when to try again. */
export async function markMailFailed(tx: EntityManager, id: number, attempts: number, error: string, retryInMs: number): Promise<void> {
  await runStatement(tx, sql`update mail_outbox set attempts = ${attempts}, last_error = ${error}, next_attempt_at = now() + interval '1 millisecond' * ${retryInMs} where id = ${id}`);
}

/** Deletes the rows sent more than `keepMs` ago. */
export async function deleteSentMails(em: EntityManager, keepMs: number): Promise<void> {
  await runStatement(em, sql`delete from mail_outbox where sent_at < now() - interval '1 millisecond' * ${keepMs}`);
}
