import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/**
 * When each periodic job last ran on any instance (db/jobs.ts sharedPeriod), so that several
 * instances on one database run it once per period between them, not once each.
 */
@Entity({ tableName: 'job_runs' })
export class JobRun {
  @PrimaryKey({ type: 'string', length: 100 })
  name!: string;

  @Property({ type: 'datetime' })
  ranAt!: Date;
}
