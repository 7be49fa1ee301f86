import { Migration } from '@mikro-orm/migrations';

/**
 * The outbox is woken by the LISTEN connection each process already holds (core/events.ts), not
 * by a tight poll: an insert into mail_outbox sends `mailQueued` on the live events channel from
 * the inserting transaction itself, so the NOTIFY goes out only if the mail is committed, and a
 * transaction that queues several mails sends one (PostgreSQL folds identical notifications).
 * The payload is a constant, `{"type":"mailQueued","at":0}`, so PostgreSQL folds a transaction's repeats into one NOTIFY.
 */
export class Migration20261126120000MailOutboxNotify extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create or replace function "mail_outbox_queued"() returns trigger language plpgsql as $$
begin
  perform pg_notify('blog_live_events', '{"type":"mailQueued","at":0}');
  return null;
end
$$;`);
    this.addSql(`create trigger "mail_outbox_queued" after insert on "mail_outbox" for each statement execute function "mail_outbox_queued"();`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger if exists "mail_outbox_queued" on "mail_outbox";`);
    this.addSql(`drop function if exists "mail_outbox_queued"();`);
  }
}
