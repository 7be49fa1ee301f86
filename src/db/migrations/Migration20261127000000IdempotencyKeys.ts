import { Migration } from '@mikro-orm/migrations';

/** Stored answers of creates sent with an Idempotency-Key (modules/idempotency). */
export class Migration20261127000000IdempotencyKeys extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "idempotency_keys" ("scope" varchar(100) not null, "key" varchar(255) not null, "fingerprint" varchar(64) not null, "status" smallint not null, "body" text null, "resource_id" int not null, "created_at" timestamptz not null default now(), "expires_at" timestamptz not null, constraint "idempotency_keys_pkey" primary key ("scope", "key"));`,
    );
    this.addSql(`create index "idempotency_keys_expires_at_index" on "idempotency_keys" ("expires_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "idempotency_keys";`);
  }
}
