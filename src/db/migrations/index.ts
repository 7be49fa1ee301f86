import { Migration20261122000000Initial } from './Migration20261122000000Initial';

/** Every migration, in order. Listed rather than globbed so compiled and test runs see the same set. */
export const migrationsList = [
  { name: 'Migration20261122000000Initial', class: Migration20261122000000Initial },
];
