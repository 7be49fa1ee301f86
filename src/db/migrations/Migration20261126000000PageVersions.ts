import { Migration } from '@mikro-orm/migrations';

/**
 * What public pages show (posts, their comments, their authors) has a version: the sum of
 * `page_versions.v`, which grows by one with every transaction that commits a change to posts,
 * comments or users (http/revalidation.ts). A revalidation compares it with the version its page
 * was built at and answers 304 without building the page again when nothing committed since.
 *
 * - The sum grows at commit, under the transaction's own visibility: a reader sees the new
 *   version exactly when it can see the change (a sequence would move before the commit).
 * - The bump is a deferred constraint trigger: it runs once per transaction (a transaction-local
 *   setting remembers it), at commit, when the transaction already holds every other lock it
 *   takes, so waiting for a bucket's row lock cannot close a deadlock; 16 rows (by transaction
 *   id) keep concurrent commits from queueing on one.
 */
export class Migration20261126000000PageVersions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "page_versions" ("bucket" smallint not null, "v" bigint not null default 0, constraint "page_versions_pkey" primary key ("bucket"));`);
    this.addSql(`insert into "page_versions" ("bucket") select generate_series(0, 15);`);
    this.addSql(`create function "page_versions_bump"() returns trigger language plpgsql as $$
begin
  if current_setting('blog.page_versions_bumped', true) is distinct from txid_current()::text then
    perform set_config('blog.page_versions_bumped', txid_current()::text, true);
    update "page_versions" set "v" = "v" + 1 where "bucket" = txid_current() % 16;
  end if;
  return null;
end $$;`);
    for (const table of ['posts', 'comments', 'users']) {
      this.addSql(
        `create constraint trigger "${table}_page_versions" after insert or update or delete on "${table}" deferrable initially deferred for each row execute function "page_versions_bump"();`,
      );
    }
  }

  override async down(): Promise<void> {
    for (const table of ['posts', 'comments', 'users']) this.addSql(`drop trigger if exists "${table}_page_versions" on "${table}";`);
    this.addSql(`drop function if exists "page_versions_bump"();`);
    this.addSql(`drop table if exists "page_versions";`);
  }
}
