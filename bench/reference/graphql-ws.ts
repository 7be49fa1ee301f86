import { EventEmitter, on } from 'node:events';
import { createServer } from 'node:http';
import { GraphQLBoolean, GraphQLInt, GraphQLNonNull, GraphQLObjectType, GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';

/**
 * The subscriptions comparator of the realtime scenario (bench/realtime.ts): a bare graphql-ws
 * server (ws + graphql-ws on node:http, as graphql-ws's README sets one up) with a one-field
 * schema and one subscription, `commentAdded(postId)`, fed by an EventEmitter, and nothing else:
 * no context, no authentication, no database. What an idle subscriber costs here is what the
 * WebSocket, graphql-ws's state and a live async iterator cost on this Node; the service's figure
 * is held to it. Besides the WebSocket it answers GET /readyz (the bench starts every target on it)
 * and GET /subscriptions (how many subscriptions are live, which the scenario waits for).
 */
const events = new EventEmitter();
// One listener per subscriber on a few event names: thousands is the point, not a leak.
events.setMaxListeners(0);
const topic = (postId: number) => `comment:${postId}`;

const schema = new GraphQLSchema({
  query: new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLBoolean, resolve: () => true } } }),
  subscription: new GraphQLObjectType({
    name: 'Subscription',
    fields: {
      commentAdded: {
        type: GraphQLInt,
        args: { postId: { type: new GraphQLNonNull(GraphQLInt) } },
        // events.on's iterator yields each emit's arguments; returning it removes its listener.
        subscribe: (_root, args: { postId: number }) => on(events, topic(args.postId)),
        resolve: (emitted: unknown[]) => emitted[0],
      },
    },
  }),
});

const live = () => events.eventNames().reduce((n, name) => n + (String(name).startsWith('comment:') ? events.listenerCount(name) : 0), 0);

const server = createServer((req, res) => {
  if (req.url === '/readyz' || req.url === '/subscriptions') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(req.url === '/readyz' ? 'ready' : String(live()));
    return;
  }
  res.writeHead(404).end();
});
useServer({ schema }, new WebSocketServer({ server, path: '/graphql' }));
server.listen(Number(process.env.PORT || 3003), process.env.HOST || '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
