import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GraphQLObjectType } from 'graphql';
import { buildGraphqlSchema, schemaSdl } from '../src/graphql/schema';
import { directResolvers } from '../src/modules';

it('schema/schema.graphql is the SDL the code emits (run `npm run schema` after changing GraphQL types)', async () => {
  const committed = readFileSync(join(__dirname, '..', 'schema', 'schema.graphql'), 'utf8');
  expect(committed).toBe(await schemaSdl());
});

it('a page\'s embeds run as the direct resolvers, without type-graphql\'s per-call wrapper (graphql/direct-resolvers.ts)', async () => {
  const schema = await buildGraphqlSchema();
  const fields = (type: string) => (schema.getType(type) as GraphQLObjectType).getFields();
  for (const [type, resolvers] of Object.entries(directResolvers)) {
    for (const [name, resolve] of Object.entries(resolvers)) expect(fields(type)[name].resolve).toBe(resolve);
  }
  expect(Object.keys(directResolvers.Post).sort()).toEqual(['comments', 'commentsCount', 'user']);
});
