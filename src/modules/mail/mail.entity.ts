import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/**
 * The outbox: a message is written here in the request's transaction and sent afterwards by
 * the mail worker, retried with backoff until the SMTP server accepts it.
 */
@Entity({ tableName: 'mail_outbox' })
@Index({ name: 'mail_outbox_pending_index', properties: ['nextAttemptAt'], expression: 'create index "mail_outbox_pending_index" on "mail_outbox" ("next_attempt_at") where "sent_at" is null' })
export class OutboxMail {
  @PrimaryKey({ type: 'integer', autoincrement: true })
  id!: number;

  @Property({ type: 'string', length: 255, fieldName: 'to_address' })
  to!: string;

  @Property({ type: 'string', length: 255 })
  subject!: string;

  @Property({ type: 'text' })
  text!: string;

  @Property({ type: 'integer', default: 0 })
  attempts: number = 0;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  nextAttemptAt: Date = new Date();

  @Property({ type: 'datetime', nullable: true })
  sentAt: Date | null = null;

  @Property({ type: 'text', nullable: true })
  lastError: string | null = null;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}
