/**
 * A GraphQL answer as REST writes the same data: snake_case keys, ISO timestamps (test/parity.test.ts
 * compares the two surfaces through it; the service builds REST's JSON in SQL, db/json-sql.ts).
 */
export function snake(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(snake);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = snake(v);
    return out;
  }
  return value;
}
