import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/**
 * One of the 16 counters whose sum is the version of what public pages show (posts, comments,
 * users): bumped by a trigger at the commit of every transaction that changes them (migration
 * PageVersions), read by core/http.ts Revalidation and db/list-totals.ts. Never written by the service itself.
 */
@Entity({ tableName: 'page_versions' })
export class PageVersion {
  @PrimaryKey({ type: 'smallint', autoincrement: false })
  bucket!: number;

  @Property({ type: 'bigint', defaultRaw: '0' })
  v!: string;
}
