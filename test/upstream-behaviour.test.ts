import { GraphQLInt, GraphQLObjectType, GraphQLSchema, parse, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { MessageType, makeServer, stringifyMessage } from 'graphql-ws';
import { until } from './support/wait';

/**
 * Behaviour of a dependency that the service relies on and that no documentation promises.
 * Each test names it; a failure here after an upgrade means the code named in the test must be
 * revisited, not this test.
 */

describe('graphql-ws keeps the ExecutionArgs object onSubscribe returns, itself, for the operation\'s life', () => {
  // src/graphql/ws.ts (subscribeWithDeliveries) clears `contextValue` on that object once the
  // subscription's source stream exists, so that an idle subscription does not hold the
  // subscribe message's EntityManager fork. If graphql-ws copied the object, the fork would be
  // held again (silently: a memory cost per idle subscription, no failing request).
  it('subscribe and onNext see the very object onSubscribe returned, and see the change made to it', async () => {
    const schema = new GraphQLSchema({
      query: new GraphQLObjectType({ name: 'Query', fields: { a: { type: GraphQLInt } } }),
      subscription: new GraphQLObjectType({
        name: 'Subscription',
        fields: { tick: { type: GraphQLInt, subscribe: async function* () { yield { tick: 1 }; }, resolve: (v: { tick: number }) => v.tick } },
      }),
    });
    let returned: ExecutionArgs | undefined;
    let subscribed: ExecutionArgs | undefined;
    let nexted: ExecutionArgs | undefined;
    const server = makeServer({
      schema,
      onSubscribe: () => (returned = { schema, document: parse('subscription { tick }'), contextValue: { fork: 'held' } }),
      subscribe: async (args) => {
        subscribed = args;
        (args as { contextValue: unknown }).contextValue = undefined;
        const { subscribe } = await import('graphql');
        return subscribe({ ...args, contextValue: {} });
      },
      onNext: (_ctx, _id, _payload, args: ExecutionArgs, _result: ExecutionResult) => {
        nexted = args;
      },
    });

    const sent: string[] = [];
    let receive: ((data: string) => Promise<void>) | undefined;
    const closed = server.opened(
      {
        protocol: 'graphql-transport-ws',
        send: (data) => void sent.push(data),
        close: () => undefined,
        onMessage: (cb) => void (receive = cb),
      },
      {},
    );
    await receive!(stringifyMessage({ type: MessageType.ConnectionInit }));
    await receive!(stringifyMessage({ id: '1', type: MessageType.Subscribe, payload: { query: 'subscription { tick }' } }));
    await until(() => sent.some((m) => JSON.parse(m).type === MessageType.Complete), 'the complete message', { ms: 5_000, everyMs: 10 }).catch(() => {
      throw new Error(`no complete: ${sent.join('\n')}`);
    });
    await closed(1000, 'done');

    expect(sent.map((m) => JSON.parse(m))).toEqual([
      { type: MessageType.ConnectionAck },
      { id: '1', type: MessageType.Next, payload: { data: { tick: 1 } } },
      { id: '1', type: MessageType.Complete },
    ]);
    expect(subscribed).toBe(returned);
    expect(nexted).toBe(returned);
    expect(returned!.contextValue).toBeUndefined();
  });
});
