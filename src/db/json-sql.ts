import type { ShapeField } from '../core/shape';

/**
 * REST answers built by PostgreSQL (snake_case keys, ISO-8601 UTC timestamps): a route selects
 * its rows' JSON text, which the adapter writes as it is, instead of rows that Node turns into
 * objects, dates, snake_cased copies and JSON again. Each resource's answer is declared once
 * (its module's repository) and read by every route that returns it, writes included, and
 * hashed for its tags (core/etag.ts).
 *
 * The text is what JSON.stringify writes for the same values: the same key order, no spaces
 * (json_build_object writes `{"id" : 1, ...}`), strings escaped alike, null as null, timestamps
 * as Date#toJSON writes them. So each object is concatenated from its parts here, declared as a
 * list of keys with their types, never written by hand. test/json-sql.test.ts compares it with
 * JSON.stringify value by value.
 */

/** ISO-8601 UTC with milliseconds, exactly as Date.prototype.toJSON writes it; null stays null. */
const isoSql = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * How a value is written: `int` and `bool` as PostgreSQL prints them (which is JSON's spelling),
 * `string` through to_json (it escapes exactly the characters JSON.stringify escapes, the same
 * way: `\"`, `\\`, `\b\f\n\r\t`, other controls as lowercase `\u00xx`; everything else as is),
 * `timestamp` as a quoted isoSql, `json` as JSON text built already (an embedded object or
 * array). A trailing `?` lets the value be SQL null, written `null`.
 */
type JsonType = 'int' | 'bool' | 'string' | 'timestamp' | 'json';

/** One key of an object: its name, its type, and its SQL (by default the column of that name of the row alias). */
export type JsonKey = readonly [name: string, type: JsonType | `${JsonType}?`, sql?: string];

/** A shape's keys (core/shape.ts), in its order: each field's column and type, nullable where it may be null. */
export const jsonKeysOf = (shape: { fields: readonly ShapeField[] }): JsonKey[] => shape.fields.map((f) => [f.column, f.nullable ? `${f.type}?` : f.type]);

const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;

function valueSql(type: JsonType, sql: string): string {
  switch (type) {
    case 'int':
    case 'bool':
    case 'json':
      return `(${sql})::text`;
    case 'string':
      return `to_json((${sql})::text)::text`;
    case 'timestamp':
      return `'"' || ${isoSql(`(${sql})`)} || '"'`;
  }
}

/**
 * A JSON object as text, compact, its keys in the given order, over the row alias `x`. A value
 * that is SQL null without `?` makes the whole object null: a column declared NOT NULL is expected.
 */
export function jsonObjectSql(x: string, keys: readonly JsonKey[]): string {
  const parts: string[] = [];
  keys.forEach(([name, declared, sql], i) => {
    const nullable = declared.endsWith('?');
    const type = (nullable ? declared.slice(0, -1) : declared) as JsonType;
    const value = valueSql(type, sql ?? `${x}.${name}`);
    parts.push(literal(`${i ? ',' : '{'}${JSON.stringify(name)}:`), nullable ? `coalesce(${value}, 'null')` : value);
  });
  parts.push(literal(keys.length ? '}' : '{}'));
  return `(${parts.join(' || ')})`;
}

/**
 * The aggregate of a JSON-text expression over a group, in `orderBy`, as a text[] (empty, not
 * null, for no rows): jsonArraySql writes it and `cardinality` counts it, so a list and its count
 * come from one aggregate.
 */
export const jsonAggSql = (element: string, orderBy: string) => `coalesce(array_agg(${element} order by ${orderBy}), '{}'::text[])`;

/** A JSON array as text from a text[] of JSON texts (jsonAggSql). */
export const jsonArraySql = (elements: string) => `('[' || array_to_string(${elements}, ',') || ']')`;

/** The answer of a write, which must see its own row: a row it cannot read back is a bug (500). */
export function written(json: string | null, what: string): string {
  if (json === null) throw new Error(`${what} is not visible to its own write`);
  return json;
}
