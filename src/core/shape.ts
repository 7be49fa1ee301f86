import { ReferenceKind, types, UnderscoreNamingStrategy, type EntitySchema, type Hidden, type InferEntity, type Opt, type Platform } from '@mikro-orm/core';

/**
 * A resource's shape: which fields of an entity leave the service, in which order. Everything
 * else about them is the entity's (defineEntity): the column, the type, whether it may be null.
 * From that one list the read paths take their select list, their row type, the row → view
 * mapping, the view type and the presenter (and db/json-sql.ts the REST JSON's keys), all built once, at module
 * load, so a request only runs them. The GraphQL object types and the OpenAPI schemas stay
 * written in their own tools' idiom and test/shapes.test.ts holds them to the shapes (and the
 * shapes to the metadata MikroORM discovers).
 */

/** How a field travels: the db/json-sql.ts type of its REST value, and the JS type of its view. */
export type FieldType = 'int' | 'bool' | 'string' | 'timestamp';

export interface ShapeField {
  /** The entity's property. */
  readonly property: string;
  /** Its key in the view (camelCase): the property, or for a to-one relation the related id (user → userId). */
  readonly key: string;
  /** Its column, which is also its REST key (snake_case): the naming strategy's name of `key`. */
  readonly column: string;
  readonly type: FieldType;
  readonly nullable: boolean;
  /** A to-one relation, carried as the related row's id. */
  readonly relation: boolean;
}

export interface Shape<View, Row, Source> {
  readonly entity: string;
  readonly fields: readonly ShapeField[];
  /** The QueryBuilder select list over the entity aliased `alias`: one column per field, named as the row's keys. */
  select<A extends string>(alias: A): `${A}.${keyof Source & string}`[];
  /** The view of a row of the select list, its timestamps parsed by the platform as hydration does. */
  view(row: Row, platform: Pick<Platform, 'parseDate'>): View;
  /** The view of an entity (or of anything with the shape's properties): what a write answers on GraphQL. */
  present(source: Source): View;
}

// Types follow from the entity's inferred type (InferEntity), as the values follow from its metadata.

/** The entity's properties a shape may carry: not a hidden one (a password never leaves). */
type Carried<E> = { [K in keyof E & string]: E[K] extends Hidden ? never : K }[keyof E & string];
/** A property's value without MikroORM's `Opt` brand (a default or onCreate makes it optional in em.create). */
type Unbranded<V> = V extends Opt<infer U> ? U : V;
type IsRelation<V> = NonNullable<Unbranded<V>> extends Date ? false : NonNullable<Unbranded<V>> extends object ? true : false;
type ViewKey<E, K extends keyof E & string> = IsRelation<E[K]> extends true ? `${K}Id` : K;
/** Every id is an integer (core/base.entity.ts), so a relation travels as a number. */
type ViewValue<E, K extends keyof E> = IsRelation<E[K]> extends true ? number : Unbranded<E[K]>;
/** A column as PostgreSQL answers it: timestamps as text (MikroORM turns pg's date parsing off). */
type RowValue<V> = V extends Date ? string : V;
/** UnderscoreNamingStrategy at the type level (publishedAt → published_at); shapeOf checks each column against it. */
type Snake<S extends string> = S extends `${infer C}${infer Rest}` ? `${C extends Lowercase<C> ? C : `_${Lowercase<C>}`}${Snake<Rest>}` : S;

type ViewFor<E, F extends keyof E & string> = { -readonly [K in F as ViewKey<E, K>]: ViewValue<E, K> };
type RowFor<E, F extends keyof E & string> = { [K in F as Snake<ViewKey<E, K>>]: RowValue<ViewValue<E, K>> };
type SourceFor<E, F extends keyof E & string> = { [K in F]: IsRelation<E[K]> extends true ? { id: number } : E[K] };

export type ViewOf<S> = S extends Shape<infer View, unknown, never> ? View : never;
export type RowOf<S> = S extends Shape<unknown, infer Row, never> ? Row : never;

/** The column of a key: the ORM's default naming strategy, the one mikro-orm.config.ts leaves in place. */
const naming = new UnderscoreNamingStrategy();

const SCALARS = new Map<unknown, FieldType>([
  [types.integer, 'int'],
  [types.smallint, 'int'],
  [types.boolean, 'bool'],
  [types.string, 'string'],
  [types.text, 'string'],
  [types.datetime, 'timestamp'],
]);

/** A field of the schema's definition (its property options, as defineEntity's builders wrote them). */
function fieldOf(schema: EntitySchema, property: string): ShapeField {
  const where = `${schema.meta.className}.${property}`;
  const options = schema.meta.properties[property] as
    | { kind?: string; type?: unknown; enum?: boolean; items?: unknown[]; nullable?: boolean; hidden?: boolean; fieldName?: string }
    | undefined;
  if (!options) throw new Error(`shape: ${where} is not a property`);
  if (options.hidden) throw new Error(`shape: ${where} is hidden and never leaves the service`);
  const relation = options.kind === ReferenceKind.MANY_TO_ONE;
  let type: FieldType | undefined;
  if (relation) type = 'int';
  else if (options.kind === undefined || options.kind === ReferenceKind.SCALAR) {
    type = options.enum ? (options.items?.every((i) => typeof i === 'string') ? 'string' : undefined) : SCALARS.get(options.type);
  }
  if (!type) throw new Error(`shape: ${where} has a kind or type a shape does not carry`);
  const key = relation ? `${property}Id` : property;
  const column = naming.propertyToColumnName(key);
  // The row type names columns by the same rule (Snake): a column named otherwise would make it lie.
  if (options.fieldName !== undefined && options.fieldName !== column) throw new Error(`shape: ${where} is column ${options.fieldName}, not ${column}`);
  return { property, key, column, type, nullable: options.nullable === true, relation };
}

/**
 * The row → view function of `fields`, written once as one object literal (its keys in order,
 * each column read by name), as MikroORM compiles its own hydrators: every view then has one
 * hidden class and each column is a monomorphic load. A loop over the fields with computed keys
 * took about 0.8 µs a post row against 0.04 µs for this (dates' parsing aside; Node 24), on every
 * row of every read. The names are the entity's, quoted by JSON.stringify; nothing of a request
 * goes into the text. test/shapes.test.ts checks what it returns.
 */
function compileView(fields: readonly ShapeField[]): (row: object, platform: Pick<Platform, 'parseDate'>) => unknown {
  const value = (f: ShapeField) => {
    const column = `row[${JSON.stringify(f.column)}]`;
    return f.type === 'timestamp' ? `${column} === null ? null : platform.parseDate(${column})` : column;
  };
  const literal = fields.map((f) => `${JSON.stringify(f.key)}: ${value(f)}`).join(', ');
  return new Function('row', 'platform', `return { ${literal} };`) as (row: object, platform: Pick<Platform, 'parseDate'>) => unknown;
}

/**
 * The shape of `schema`'s entity carrying `properties`, in that order (the order of the select
 * list, the view and the REST JSON). Throws at load for a hidden property or a type it cannot carry.
 */
export function shapeOf<S extends EntitySchema, const F extends readonly Carried<InferEntity<S>>[]>(
  schema: S,
  properties: F,
): Shape<ViewFor<InferEntity<S>, F[number]>, RowFor<InferEntity<S>, F[number]>, SourceFor<InferEntity<S>, F[number]>> {
  type View = ViewFor<InferEntity<S>, F[number]>;
  const fields = properties.map((p) => fieldOf(schema, p));
  const view = compileView(fields);
  return {
    entity: schema.meta.className,
    fields,
    select: (alias) => fields.map((f) => `${alias}.${f.property}` as `${typeof alias}.${F[number]}`),
    view: (row, platform) => view(row, platform) as View,
    // Not on a hot path (a write's answer, a subscription's first object): a plain loop.
    present(source) {
      const s = source as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const f of fields) out[f.key] = f.relation ? (s[f.property] as { id: number }).id : s[f.property];
      return out as View;
    },
  };
}
