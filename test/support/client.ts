/** Minimal HTTP clients for both surfaces, so tests read like the requests users send. */
export interface RestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function rest<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  opts: { body?: unknown; rawBody?: string; token?: string; headers?: Record<string, string> } = {},
): Promise<RestResponse<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
  const res = await fetch(baseUrl + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

export interface GqlResponse<T = any> {
  status: number;
  data: T | null | undefined;
  errors?: { message: string; extensions?: { code?: string; errors?: { field: string | null; message: string }[]; [k: string]: unknown }; path?: unknown[] }[];
}

export async function gql<T = any>(
  baseUrl: string,
  query: string,
  variables?: Record<string, unknown>,
  opts: { token?: string; headers?: Record<string, string> } = {},
): Promise<GqlResponse<T>> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const res = await fetch(baseUrl + '/graphql', { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  const json = (await res.json()) as { data?: T; errors?: GqlResponse['errors'] };
  return { status: res.status, data: json.data, errors: json.errors };
}

/**
 * Binds both clients to one running app. Every REST answer is also checked against the
 * OpenAPI document (test/support/openapi.ts), so each suite holds the document to the truth;
 * pass `{ openapi: false }` for tests that send deliberately undocumented traffic.
 */
export function clients(baseUrl: string, opts: { openapi?: boolean } = {}) {
  // Required lazily: openapi.ts imports this file's `rest`.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- because a static import would make the two modules import each other
  const checked = opts.openapi === false ? undefined : (require('./openapi') as typeof import('./openapi')).checkedRest(baseUrl);
  return {
    rest: <T = any>(method: string, path: string, o?: Parameters<typeof rest>[3]) =>
      checked ? checked<T>(method, path, o) : rest<T>(baseUrl, method, path, o),
    gql: <T = any>(query: string, variables?: Record<string, unknown>, o?: Parameters<typeof gql>[3]) => gql<T>(baseUrl, query, variables, o),
  };
}
