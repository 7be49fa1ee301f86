import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/**
 * Fixed-window counters kept in PostgreSQL so every instance sees the same numbers: the per-IP
 * budget on /auth/*, where a burst over a window boundary is harmless and one row per window is cheap.
 */
@Entity({ tableName: 'rate_limits' })
export class RateLimitCounter {
  @PrimaryKey({ type: 'string', length: 400 })
  key!: string;

  @PrimaryKey({ type: 'datetime' })
  windowStart!: Date;

  @Property({ type: 'integer', default: 0 })
  count: number = 0;

  @Property({ type: 'datetime' })
  @Index({ name: 'rate_limits_expires_at_index' })
  expiresAt!: Date;
}

/**
 * One row per counted attempt for the sliding-window limits (failed logins per (email, IP),
 * reset mails per address, verification resends per user): a fixed window would let up to
 * twice a limit through around its boundary.
 */
@Entity({ tableName: 'rate_attempts' })
@Index({ name: 'rate_attempts_key_at_index', properties: ['key', 'at'] })
export class RateAttempt {
  @PrimaryKey({ type: 'bigint', autoincrement: true })
  id!: string;

  @Property({ type: 'string', length: 400 })
  key!: string;

  @Property({ type: 'datetime' })
  at!: Date;

  /** When the attempt leaves its window; the cleanup job deletes rows past it. */
  @Property({ type: 'datetime' })
  @Index({ name: 'rate_attempts_expires_at_index' })
  expiresAt!: Date;
}
