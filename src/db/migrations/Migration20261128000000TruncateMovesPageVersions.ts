import { Migration } from '@mikro-orm/migrations';

/**
 * The data version (migration PageVersions) moves on TRUNCATE too. Its triggers were row-level,
 * and TRUNCATE fires no row trigger: after an operator's `truncate comments` every remembered tag
 * and total kept answering for the old rows. A statement-level trigger per table bumps it the
 * same way (once per transaction), in the truncating transaction, so the new version is visible
 * exactly when the emptied table is. (A constraint trigger, deferred to the commit, exists for
 * rows only.)
 */
export class Migration20261128000000TruncateMovesPageVersions extends Migration {
  override async up(): Promise<void> {
    for (const table of ['posts', 'comments', 'users']) {
      this.addSql(`create trigger "${table}_page_versions_truncate" after truncate on "${table}" for each statement execute function "page_versions_bump"();`);
    }
  }

  override async down(): Promise<void> {
    for (const table of ['posts', 'comments', 'users']) this.addSql(`drop trigger if exists "${table}_page_versions_truncate" on "${table}";`);
  }
}
