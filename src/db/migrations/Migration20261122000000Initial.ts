import { Migration } from '@mikro-orm/migrations';

/** Every table of the spec, plus the mail outbox and the rate-limit counters. */
export class Migration20261122000000Initial extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "users" ("id" serial primary key, "created_at" timestamptz not null, "updated_at" timestamptz not null, "name" varchar(255) not null, "email" varchar(255) not null, "password" varchar(255) not null, "role" text check ("role" in ('user', 'admin', 'moderator')) not null default 'user', "email_verified_at" timestamptz null, "token_version" int not null default 0, "deleted_at" timestamptz null);`);
    this.addSql(`alter table "users" add constraint "users_email_unique" unique ("email");`);
    this.addSql(`create index "users_deleted_at_index" on "users" ("deleted_at");`);

    this.addSql(`create table "password_reset_tokens" ("email" varchar(255) not null, "token" varchar(64) not null, "created_at" timestamptz not null default now(), constraint "password_reset_tokens_pkey" primary key ("email"));`);
    this.addSql(`create index "password_reset_tokens_token_index" on "password_reset_tokens" ("token");`);

    this.addSql(`create table "posts" ("id" serial primary key, "created_at" timestamptz not null, "updated_at" timestamptz not null, "user_id" int not null, "title" varchar(255) not null, "slug" varchar(255) not null, "body" text not null, "published" boolean not null default false, "published_at" timestamptz null, "deleted_at" timestamptz null);`);
    this.addSql(`create index "posts_user_id_index" on "posts" ("user_id");`);
    this.addSql(`alter table "posts" add constraint "posts_slug_unique" unique ("slug");`);
    this.addSql(`create index "posts_deleted_at_id_index" on "posts" ("deleted_at", "id");`);
    this.addSql(`create index "posts_created_at_id_index" on "posts" ("created_at", "id");`);
    this.addSql(`alter table "posts" add constraint "posts_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);

    this.addSql(`create table "comments" ("id" serial primary key, "created_at" timestamptz not null, "updated_at" timestamptz not null, "post_id" int not null, "user_id" int not null, "body" text not null);`);
    this.addSql(`create index "comments_user_id_index" on "comments" ("user_id");`);
    this.addSql(`create index "comments_post_id_created_at_id_index" on "comments" ("post_id", "created_at", "id");`);
    this.addSql(`alter table "comments" add constraint "comments_post_id_foreign" foreign key ("post_id") references "posts" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "comments" add constraint "comments_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);

    this.addSql(`create table "tenant_posts" ("id" serial primary key, "created_at" timestamptz not null, "updated_at" timestamptz not null, "tenant_id" int not null, "title" varchar(255) not null, "body" text not null);`);
    this.addSql(`create index "tenant_posts_tenant_id_id_index" on "tenant_posts" ("tenant_id", "id");`);

    this.addSql(`create table "mail_outbox" ("id" serial primary key, "to_address" varchar(255) not null, "subject" varchar(255) not null, "text" text not null, "attempts" int not null default 0, "next_attempt_at" timestamptz not null default now(), "sent_at" timestamptz null, "last_error" text null, "created_at" timestamptz not null default now());`);
    this.addSql(`create index "mail_outbox_pending_index" on "mail_outbox" ("next_attempt_at") where "sent_at" is null;`);

    this.addSql(`create table "rate_limits" ("key" varchar(400) not null, "window_start" timestamptz not null, "count" int not null default 0, "expires_at" timestamptz not null, constraint "rate_limits_pkey" primary key ("key", "window_start"));`);
    this.addSql(`create index "rate_limits_expires_at_index" on "rate_limits" ("expires_at");`);
  }
}
