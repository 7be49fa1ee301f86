import { isObjectType, type GraphQLSchema } from 'graphql';
import type { RequestContext } from '../core/context';

/** Field resolvers of one object type, by field name, as graphql-js calls them: (source, args, context). */
export type DirectResolvers<Source> = Record<string, (source: Source, args: object, ctx: RequestContext) => unknown>;

/**
 * Makes `resolvers` the fields' own resolve functions in the built schema, in place of the
 * wrappers type-graphql builds around its @FieldResolver methods: graphql-js then calls them
 * directly (GraphQLField.resolve). The @FieldResolver declarations keep the fields' types and
 * descriptions, and call the same functions. A type or field that does not exist is an error at
 * start, not a silent fallback to the wrapper.
 */
export function installDirectResolvers(schema: GraphQLSchema, resolvers: Record<string, DirectResolvers<never>>): void {
  for (const [typeName, fields] of Object.entries(resolvers)) {
    const type = schema.getType(typeName);
    if (!isObjectType(type)) throw new Error(`direct resolvers: no object type ${typeName}`);
    const defs = type.getFields();
    for (const [name, resolve] of Object.entries(fields)) {
      if (!defs[name]) throw new Error(`direct resolvers: no field ${typeName}.${name}`);
      defs[name].resolve = resolve as (source: unknown, args: object, ctx: unknown) => unknown;
    }
  }
}
