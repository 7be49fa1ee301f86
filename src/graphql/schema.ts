import 'reflect-metadata';
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchema, type ResolverData } from 'type-graphql';
import { directResolvers, resolvers } from '../modules';
import { installDirectResolvers } from './direct-resolvers';
import type { Services } from '../modules/services';

/**
 * Builds the executable schema. Resolvers are constructed once with the app's Services;
 * without services (SDL emission) they are never called.
 */
export async function buildGraphqlSchema(services?: Services): Promise<GraphQLSchema> {
  const instances = new Map<unknown, unknown>();
  const schema = await buildSchema({
    resolvers,
    validate: false,
    // Required by type-graphql once a @Subscription exists, but unused: every subscription brings
    // its own `subscribe` (graphql/live.ts, fed by PostgreSQL LISTEN), never topics.
    pubSub: {
      publish: () => {
        throw new Error('type-graphql pubSub is not used: events go through db/events.ts');
      },
      subscribe: () => {
        throw new Error('type-graphql pubSub is not used: subscriptions bring their own subscribe');
      },
    },
    container: {
      get(cls: new (s: Services) => unknown, _data: ResolverData<object>) {
        if (!services) throw new Error('Schema built without services cannot execute');
        let instance = instances.get(cls);
        if (!instance) instances.set(cls, (instance = new cls(services)));
        return instance;
      },
    },
  });
  installDirectResolvers(schema, directResolvers);
  return schema;
}

/** The SDL committed at schema/schema.graphql; sorted so it diffs cleanly. */
export async function schemaSdl(): Promise<string> {
  return printSchema(lexicographicSortSchema(await buildGraphqlSchema())) + '\n';
}
