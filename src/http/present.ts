import type { ListResult } from '../core/pagination';

/** A record's REST answer as JSON text, built by PostgreSQL (each module's repository). */
export interface JsonText {
  json: string;
}

/**
 * A list whose records are already REST JSON text (built by PostgreSQL, JsonText): the
 * records are spliced in as they are and only the pagination keys are serialised here.
 */
export function jsonListText(result: ListResult<JsonText>): string {
  const { data, ...keys } = result;
  const rest = JSON.stringify(keys);
  let body = '{"data":[';
  for (let i = 0; i < data.length; i++) body += (i ? ',' : '') + data[i].json;
  return body + (rest === '{}' ? ']}' : `],${rest.slice(1)}`);
}

/** A JSON array of records already JSON text (tenant posts). */
export const jsonArrayText = (rows: readonly JsonText[]): string => `[${rows.map((r) => r.json).join(',')}]`;
