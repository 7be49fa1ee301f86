import { p } from '@mikro-orm/core';

/**
 * id and the two timestamps every table of the spec has, spread first into each entity's
 * properties (defineEntity's composition of base properties), so they are its first columns.
 */
export const baseProperties = {
  id: p.integer().primary().autoincrement(),
  createdAt: p.datetime().onCreate(() => new Date()),
  updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
};
