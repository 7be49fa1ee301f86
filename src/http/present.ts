import type { ListResult } from '../core/pagination';

// Cached: the same few dozen keys are converted for every record of every response.
const snakeKeys = new Map<string, string>();
const snakeKey = (k: string) => {
  let s = snakeKeys.get(k);
  if (s === undefined) {
    s = k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    if (snakeKeys.size < 1000) snakeKeys.set(k, s);
  }
  return s;
};

/**
 * REST shows the same views as GraphQL with snake_case keys and ISO timestamps.
 * Views are plain objects built by each module's presenter, never entities.
 */
export function snake(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(snake);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[snakeKey(k)] = snake(v);
    return out;
  }
  return value;
}

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
