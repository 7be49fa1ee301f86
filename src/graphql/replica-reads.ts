import type { ApolloServerPlugin } from '@apollo/server';
import type { RequestContext } from '../core/context';
import { readsOnlyPublicData } from './public-reads';

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
        contextValue.readFrom = anonymous && readsOnlyPublicData(operation) ? 'read' : 'write';
      },
    };
  },
};
