import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { buildOpenApiDocument, type OpenApiDocument } from '../../src/openapi/document';
import { rest, type RestResponse } from './client';

/**
 * Checks real answers against the OpenAPI document: the path and method are documented, the
 * status is one the operation lists, and the JSON body matches that status's schema (messages
 * included: error schemas enumerate them). Unknown paths must be 404 `Not found`, known paths
 * with another method 405 `Method not allowed`, as CONTRACT 7 says for every route.
 *
 *   const check = openApiValidator();
 *   const res = await api.rest('GET', '/posts?paginate=cursor');
 *   check.assert('GET', '/posts', res);
 */
export interface CheckedResponse {
  status: number;
  body: unknown;
  headers?: Headers;
}

const pointer = (...segments: string[]) =>
  segments.map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');

export function openApiValidator(doc: OpenApiDocument = buildOpenApiDocument()) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'openapi');
  const compiled = new Map<string, ValidateFunction>();
  const templates = Object.keys(doc.paths).map((template) => ({
    template,
    pattern: new RegExp('^' + template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+') + '$'),
  }));

  /** The documented template for a concrete path (`/posts/12` → `/posts/{id}`), literal matches first. */
  function templateOf(path: string): string | null {
    const bare = path.split('?')[0];
    if (doc.paths[bare]) return bare;
    return templates.find((t) => t.pattern.test(bare))?.template ?? null;
  }

  function validate(method: string, path: string, res: CheckedResponse): string[] {
    const template = templateOf(path);
    const problems: string[] = [];
    const json = (schemaRef: string) => {
      let fn = compiled.get(schemaRef);
      if (!fn) compiled.set(schemaRef, (fn = ajv.compile({ $ref: schemaRef })));
      if (!fn(res.body)) problems.push(...(fn.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message} ${JSON.stringify(e.params)}`));
    };
    if (!template) {
      if (res.status !== 404) problems.push(`${path} is not documented, yet answered ${res.status}`);
      else json('openapi#/components/schemas/Error');
      if (res.status === 404 && (res.body as { message?: string })?.message !== 'Not found') problems.push('unknown route must answer `Not found`');
      return problems;
    }
    const m = method.toLowerCase() as keyof (typeof doc.paths)[string];
    const op = doc.paths[template][m];
    if (!op) {
      if (res.status !== 405 || (res.body as { message?: string })?.message !== 'Method not allowed') problems.push(`${method} ${template} is not documented, yet answered ${res.status}`);
      return problems;
    }
    const response = op.responses[String(res.status)];
    if (!response) return [`${method} ${template}: status ${res.status} is not documented (documented: ${Object.keys(op.responses).join(', ')})`];
    if (res.headers && response.headers?.['x-request-id'] && !res.headers.get('x-request-id')) problems.push('x-request-id header missing');
    const contentType = res.headers?.get('content-type') ?? '';
    if (contentType.startsWith('text/html')) {
      if (!response.content?.['text/html']) problems.push('answered HTML where the document promises none');
    } else if (response.content?.['application/json']) {
      json('openapi#/' + pointer('paths', template, m, 'responses', String(res.status), 'content', 'application/json', 'schema'));
    }
    return problems.map((p) => `${method} ${template} ${res.status}: ${p}`);
  }

  return {
    doc,
    templateOf,
    validate,
    /** Throws with every mismatch listed, so a failing test names what differs. */
    assert(method: string, path: string, res: CheckedResponse): void {
      const problems = validate(method, path, res);
      if (problems.length) throw new Error(`Response does not match openapi.json:\n  ${problems.join('\n  ')}\n  body: ${JSON.stringify(res.body)}`);
    },
  };
}

/**
 * The validator of the service's own document, made once per test file and shared by its clients:
 * building it (the document, Ajv, its formats) and compiling a schema cost about a tenth of a
 * second of CPU each, and a file may start several apps.
 */
let shared: ReturnType<typeof openApiValidator> | undefined;
const sharedValidator = () => (shared ??= openApiValidator());

/**
 * A REST client (test/support/client.ts) whose every answer is checked against the document
 * before the test sees it, e.g. `const api = { ...clients(app.url), rest: checkedRest(app.url) }`
 * to hold a whole suite to openapi.json.
 */
export function checkedRest(baseUrl: string, check = sharedValidator()) {
  return async <T = any>(method: string, path: string, opts?: Parameters<typeof rest>[3]): Promise<RestResponse<T>> => {
    const res = await rest<T>(baseUrl, method, path, opts);
    check.assert(method, path, res);
    return res;
  };
}
