/**
 * One shape per resource (src/core/shape.ts): each module lists the entity's properties that leave
 * the service, and the read model (select list, row, view, presenter) and the REST JSON follow from
 * that list and the entity. What stays written in another tool's idiom is held to it here: the
 * GraphQL object types (type-graphql classes) and the OpenAPI schemas must carry each field under
 * its name (camelCase / snake_case), with its type and its nullability, and nothing else besides
 * the embeds named below. The shapes themselves are held to the metadata MikroORM discovers.
 */
import { MikroORM, type EntityMetadata } from '@mikro-orm/postgresql';
import { GraphQLObjectType, type GraphQLSchema } from 'graphql';
import { ormConfig } from '../mikro-orm.config';
import { shapeOf, type FieldType, type ShapeField } from '../src/core/shape';
import { buildGraphqlSchema } from '../src/graphql/schema';
import { commentShape } from '../src/modules/comment/comment.types';
import { postShape } from '../src/modules/post/post.types';
import { tenantPostShape } from '../src/modules/tenant-post/tenant-post.types';
import { UserSchema } from '../src/modules/user/user.entity';
import { actorShape, authorShape, userShape } from '../src/modules/user/user.types';
import { buildOpenApiDocument } from '../src/openapi/document';
import type { Schema } from '../src/openapi/types';

interface Resource {
  shape: { entity: string; fields: readonly ShapeField[] };
  /** The GraphQL object type, and its fields that are embeds (field resolvers), not the shape's. */
  graphql?: [type: string, embeds: string[]];
  /** The OpenAPI schema, and its keys that are embeds. */
  openapi?: [schema: string, embeds: string[]];
}

const RESOURCES: Record<string, Resource> = {
  post: { shape: postShape, graphql: ['Post', ['user', 'comments', 'commentsCount', 'etag']], openapi: ['Post', ['user', 'comments', 'comments_count']] },
  comment: { shape: commentShape, graphql: ['Comment', ['user', 'etag']], openapi: ['Comment', ['user']] },
  user: { shape: userShape, graphql: ['User', ['etag', 'posts']], openapi: ['User', []] },
  author: { shape: authorShape, graphql: ['Author', []], openapi: ['Author', []] },
  tenantPost: { shape: tenantPostShape, graphql: ['TenantPost', []], openapi: ['TenantPost', []] },
  actor: { shape: actorShape },
};

/** The JS type MikroORM discovers for a field's values (runtimeType), by the shape's type. */
const RUNTIME: Record<FieldType, string> = { int: 'number', bool: 'boolean', string: 'string', timestamp: 'Date' };
const GRAPHQL: Record<FieldType, string> = { int: 'Int', bool: 'Boolean', string: 'String', timestamp: 'DateTimeISO' };
const OPENAPI: Record<FieldType, string> = { int: 'integer', bool: 'boolean', string: 'string', timestamp: 'string' };

let orm: MikroORM;
// Discovery only: MikroORM connects on a first statement, and none is run.
beforeAll(async () => void (orm = await MikroORM.init(ormConfig({ clientUrl: 'postgresql://127.0.0.1:9/unused' }))));
afterAll(() => orm.close(true));

describe('each shape agrees with the metadata MikroORM discovers', () => {
  it.each(Object.entries(RESOURCES))('%s: each field is a column of its entity under that name, type and nullability; none is hidden', (_name, { shape }) => {
    const meta: EntityMetadata = orm.getMetadata().getByClassName(shape.entity);
    for (const f of shape.fields) {
      const prop = meta.properties[f.property];
      const found = {
        column: prop.fieldNames[0],
        runtime: f.relation ? prop.targetMeta!.getPrimaryProps()[0].runtimeType : prop.runtimeType,
        nullable: prop.nullable === true,
        relation: prop.kind === 'm:1',
        hidden: prop.hidden === true,
      };
      expect({ field: f.property, ...found }).toEqual({ field: f.property, column: f.column, runtime: RUNTIME[f.type], nullable: f.nullable, relation: f.relation, hidden: false });
    }
  });
});

it('a hidden property cannot be part of a shape (the password never leaves), nor a property the entity lacks', () => {
  expect(() => shapeOf(UserSchema, ['password' as never])).toThrow('shape: User.password is hidden and never leaves the service');
  expect(() => shapeOf(UserSchema, ['nope' as never])).toThrow('shape: User.nope is not a property');
});

it('a row becomes its view: keys in the shape\'s order, relations as ids, timestamps parsed as the platform does, null kept; an entity alike', () => {
  const platform = orm.em.getPlatform();
  const row = { id: 7, user_id: 3, title: 't', slug: 's', body: 'b', published: false, published_at: null, created_at: '2026-11-27 07:00:00.123+00', updated_at: '2026-11-27 08:00:00+00', deleted_at: null, author_name: 'x' };
  const view = postShape.view(row, platform);
  const expected = {
    id: 7, userId: 3, title: 't', slug: 's', body: 'b', published: false,
    publishedAt: null, createdAt: new Date('2026-11-27T07:00:00.123Z'), updatedAt: new Date('2026-11-27T08:00:00Z'), deletedAt: null,
  };
  expect(Object.keys(view)).toEqual(Object.keys(expected));
  expect(view).toEqual(expected);
  expect(platform.parseDate(row.created_at)).toEqual(view.createdAt);
  expect(postShape.present({ ...expected, user: { id: 3 } })).toEqual(expected);
});

describe('the GraphQL object types carry each shape, by camelCase key', () => {
  let schema: GraphQLSchema;
  beforeAll(async () => void (schema = await buildGraphqlSchema()));

  it.each(Object.entries(RESOURCES).filter(([, r]) => r.graphql))('%s', (_name, { shape, graphql }) => {
    const [typeName, embeds] = graphql!;
    const type = schema.getType(typeName);
    expect(type).toBeInstanceOf(GraphQLObjectType);
    const fields = (type as GraphQLObjectType).getFields();
    expect(Object.keys(fields).sort()).toEqual([...shape.fields.map((f) => f.key), ...embeds].sort());
    for (const f of shape.fields) expect([f.key, String(fields[f.key].type)]).toEqual([f.key, GRAPHQL[f.type] + (f.nullable ? '' : '!')]);
  });
});

describe('the OpenAPI schemas carry each shape, by snake_case key, in the REST answer\'s order', () => {
  const schemas = buildOpenApiDocument().components.schemas as Record<string, Schema>;

  it.each(Object.entries(RESOURCES).filter(([, r]) => r.openapi))('%s', (_name, { shape, openapi }) => {
    const [schemaName, embeds] = openapi!;
    const schema = schemas[schemaName] as { properties: Record<string, Schema>; required: string[]; additionalProperties: boolean };
    const keys = [...shape.fields.map((f) => f.column), ...embeds];
    expect(Object.keys(schema.properties)).toEqual(keys);
    expect(schema.required).toEqual(keys);
    expect(schema.additionalProperties).toBe(false);
    const meta = orm.getMetadata().getByClassName(shape.entity);
    for (const f of shape.fields) {
      const p = schema.properties[f.column] as { type: string | string[]; format?: string; maxLength?: number; enum?: unknown[] };
      const prop = meta.properties[f.property];
      const types = [p.type].flat();
      expect({ key: f.column, type: types[0], nullable: types.includes('null'), format: p.format === 'date-time' }).toEqual({
        key: f.column,
        type: OPENAPI[f.type],
        nullable: f.nullable,
        format: f.type === 'timestamp',
      });
      // What the entity knows of a string's values: its column's length, its enum's items.
      if (p.maxLength !== undefined && prop.length !== undefined) expect([f.column, p.maxLength]).toEqual([f.column, prop.length]);
      if (prop.enum) expect([f.column, p.enum]).toEqual([f.column, prop.items]);
    }
  });
});
