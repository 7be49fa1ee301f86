import type { ApolloServerPlugin } from '@apollo/server';
import { Kind } from 'graphql';
import type { RequestContext } from '../core/context';

/** Root query fields whose answers may be slightly stale: the post lists and details. */
const STALE_READS_OK = new Set(['posts', 'postsSimple', 'postsCursor', 'post', '__typename']);

/**
 * Lets an anonymous query that asks only for post lists and details read from a replica
 * (db/replicas.ts). Anything else (a mutation, an authenticated caller, any other root field,
 * fragments at the root) keeps every read on the primary. Decided once the operation is known,
 * before any resolver runs.
 */
export const replicaReadsPlugin: ApolloServerPlugin<RequestContext> = {
  async requestDidStart() {
    return {
      async didResolveOperation({ operation, contextValue, request }) {
        const anonymous = !request.http?.headers.get('authorization');
        const staleOk =
          operation?.operation === 'query' &&
          operation.selectionSet.selections.every((s) => s.kind === Kind.FIELD && STALE_READS_OK.has(s.name.value));
        contextValue.readFrom = anonymous && staleOk ? 'read' : 'write';
      },
    };
  },
};
