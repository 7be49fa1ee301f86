import { Migration } from '@mikro-orm/migrations';

/**
 * Live posts newest first, as a partial index: the page and simple formats pick a slice's ids from
 * it with an index-only scan (no heap visit per skipped row), and the page format's exact count
 * reads it too. It serves every read the full (created_at, id) index served, so that one goes.
 * Measured with `npm run explain` (docs/api.md, "What GET /posts runs").
 */
export class Migration20261124000000LivePostsIndex extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "posts_live_created_at_id_index" on "posts" ("created_at", "id") where "deleted_at" is null;`);
    this.addSql(`drop index if exists "posts_created_at_id_index";`);
  }

  override async down(): Promise<void> {
    this.addSql(`create index "posts_created_at_id_index" on "posts" ("created_at", "id");`);
    this.addSql(`drop index if exists "posts_live_created_at_id_index";`);
  }
}
