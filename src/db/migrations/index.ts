import { Migration20261122000000Initial } from './Migration20261122000000Initial';
import { Migration20261123000000SlidingLimits } from './Migration20261123000000SlidingLimits';
import { Migration20261124000000LivePostsIndex } from './Migration20261124000000LivePostsIndex';
import { Migration20261125120000JobRuns } from './Migration20261125120000JobRuns';
import { Migration20261126000000PageVersions } from './Migration20261126000000PageVersions';
import { Migration20261126120000MailOutboxNotify } from './Migration20261126120000MailOutboxNotify';
import { Migration20261127000000IdempotencyKeys } from './Migration20261127000000IdempotencyKeys';
import { Migration20261128000000TruncateMovesPageVersions } from './Migration20261128000000TruncateMovesPageVersions';

/** Every migration, in order. Listed rather than globbed so compiled and test runs see the same set. */
export const migrationsList = [
  { name: 'Migration20261122000000Initial', class: Migration20261122000000Initial },
  { name: 'Migration20261123000000SlidingLimits', class: Migration20261123000000SlidingLimits },
  { name: 'Migration20261124000000LivePostsIndex', class: Migration20261124000000LivePostsIndex },
  { name: 'Migration20261125120000JobRuns', class: Migration20261125120000JobRuns },
  { name: 'Migration20261126000000PageVersions', class: Migration20261126000000PageVersions },
  { name: 'Migration20261126120000MailOutboxNotify', class: Migration20261126120000MailOutboxNotify },
  { name: 'Migration20261127000000IdempotencyKeys', class: Migration20261127000000IdempotencyKeys },
  { name: 'Migration20261128000000TruncateMovesPageVersions', class: Migration20261128000000TruncateMovesPageVersions },
];
