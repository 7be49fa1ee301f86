/**
 * REST answers built by PostgreSQL (CONTRACT 4: snake_case keys, ISO-8601 UTC timestamps): a read
 * that only serves REST selects its rows' JSON text, which the adapter writes as it is, instead
 * of rows that Node turns into objects, dates, snake_cased copies and JSON again.
 */

/** ISO-8601 UTC with milliseconds, exactly as Date.prototype.toJSON writes it; null stays null. */
export const isoSql = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * `json_build_object` over columns of the row alias `x`: each REST key from its column (the same
 * name unless given), timestamps through isoSql.
 */
export function jsonObjectSql(x: string, keys: readonly string[], timestamps: readonly string[] = []): string {
  const stamps = new Set(timestamps);
  return `json_build_object(${keys.map((k) => `'${k}', ${stamps.has(k) ? isoSql(`${x}.${k}`) : `${x}.${k}`}`).join(', ')})`;
}
