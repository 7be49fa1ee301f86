import { Migration } from '@mikro-orm/migrations';

/** Sliding-window limits: one row per counted attempt (see core/rate-limit.ts). */
export class Migration20261123000000SlidingLimits extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "rate_attempts" ("id" bigserial primary key, "key" varchar(400) not null, "at" timestamptz not null, "expires_at" timestamptz not null);`);
    this.addSql(`create index "rate_attempts_key_at_index" on "rate_attempts" ("key", "at");`);
    this.addSql(`create index "rate_attempts_expires_at_index" on "rate_attempts" ("expires_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "rate_attempts" cascade;`);
  }
}
