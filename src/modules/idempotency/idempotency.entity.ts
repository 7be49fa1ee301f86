import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/**
 * The answer of a create sent with an Idempotency-Key, kept for the key's hours so that a repeat
 * gets it again instead of creating twice. Written in the create's own transaction
 * (idempotency.service.ts), so a row exists exactly when its create committed.
 */
@Entity({ tableName: 'idempotency_keys' })
export class IdempotencyKey {
  /** Whose key: `u:<user id>`, or `t:<tenant id>` plus `:u:<user id>` when a user is signed in. */
  @PrimaryKey({ type: 'string', length: 100 })
  scope!: string;

  @PrimaryKey({ type: 'string', length: 255 })
  key!: string;

  /** SHA-256 (hex) of the request: method, path and canonical body (or mutation and arguments). */
  @Property({ type: 'string', length: 64 })
  fingerprint!: string;

  @Property({ type: 'smallint' })
  status!: number;

  /** The exact JSON text the first answer sent (REST); null for GraphQL, which reads the object anew. */
  @Property({ type: 'text', nullable: true })
  body!: string | null;

  /** The id of the row the create made. */
  @Property({ type: 'integer' })
  resourceId!: number;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt!: Date;

  @Property({ type: 'datetime' })
  @Index({ name: 'idempotency_keys_expires_at_index' })
  expiresAt!: Date;
}
