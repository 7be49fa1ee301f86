import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';

/**
 * Fixed-window counters kept in PostgreSQL so every instance sees the same numbers:
 * failed logins per (email, IP), the per-IP budget on /auth/*, mails per address or user.
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
