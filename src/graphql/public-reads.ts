import { Kind, type OperationDefinitionNode } from 'graphql';

/**
 * The root query fields whose whole answer comes from posts, their comments and their authors:
 * the rows the data version covers (migration PageVersions, db/list-totals.ts). Only a query made
 * of these may be answered as a public read (an ETag a revalidation trusts, core/http.ts Revalidation)
 * or from a replica (graphql/replica-reads.ts): a field over any other table would be cached
 * without a version that moves when it changes. `me` is here because only anonymous requests are
 * public reads, and an anonymous `me` is null without reading any table. Fragments at the root
 * are not looked into.
 */
const PUBLIC_READ_FIELDS = new Set(['posts', 'postsSimple', 'postsCursor', 'post', 'me', '__typename']);

/** Whether `operation` is a query that asks only for post lists and details. */
export function readsOnlyPublicData(operation: OperationDefinitionNode | null | undefined): boolean {
  return operation?.operation === 'query' && operation.selectionSet.selections.every((s) => s.kind === Kind.FIELD && PUBLIC_READ_FIELDS.has(s.name.value));
}
