import { Migration } from '@mikro-orm/migrations';

/** One row per periodic job: when it last ran on any instance (core/jobs.ts sharedPeriod). */
export class Migration20261125120000JobRuns extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "job_runs" ("name" varchar(100) not null, "ran_at" timestamptz not null, constraint "job_runs_pkey" primary key ("name"));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "job_runs";`);
  }
}
