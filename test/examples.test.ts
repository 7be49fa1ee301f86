import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildOpenApiDocument } from '../src/openapi/document';
import { examples, manifest, preparedExamples, type PreparedExamples } from './support/examples';

/**
 * The typed clients in examples/ (a package of its own) stay true to the service:
 * 1. its dependencies are installed by the tests (`npm ci`, only when examples/node_modules is
 *    missing or was installed from another lock file);
 * 2. both clients regenerate, without a network, to exactly the committed output: GraphQL Code
 *    Generator's client preset from schema/schema.graphql (typed documents and the trusted
 *    documents manifest, persisted-documents.json), openapi-typescript from rest/openapi.json,
 *    itself the service's OpenAPI document;
 * 3. the examples type-check (tsc, which also builds them);
 * 4. each runs against `npm start` in a fresh copy of the project, and its typed results are
 *    what the service holds (test/examples-service.test.ts, test/examples-plain.test.ts);
 * 5. Prism's validating proxy (@stoplight/prism-cli, an examples/ devDependency: frontend teams
 *    use it as a mock server, `npm run mock`) in front of that service, given the served
 *    /openapi.json, sees docs/api.md's curl tour and the REST example: no answer breaks the
 *    document, and the only requests it flags are the ones made wrong on purpose (each answered
 *    422) (test/examples-service.test.ts);
 * 6. Prism's mock server (`npm run mock`, from rest/openapi.json) answers the same curl tour
 *    without reporting one answer of its own that breaks the document: every schema with a
 *    pattern carries an example that matches it, so the mock never has to invent a value
 *    (below, and test/examples-mock.test.ts).
 *
 * Steps 1 to 3 run once per test run, for every file that needs the built examples
 * (test/support/examples.ts preparedExamples); this file asserts what they found.
 */

let prepared: PreparedExamples;
beforeAll(async () => {
  prepared = await preparedExamples();
}, 450_000);

describe('examples/: typed clients generated from the schema and the OpenAPI document', () => {
  it('regenerate without a network to exactly the committed output', () => {
    expect(prepared.generatedBefore).toEqual(expect.arrayContaining(['graphql/src/gql/graphql.ts', 'graphql/src/gql/persisted-documents.json', 'rest/openapi.json', 'rest/src/api.d.ts']));
    if (prepared.regenerationError) throw new Error(prepared.regenerationError);
    // The regenerated files are left in place: commit them if the change is meant.
    expect({ changed: prepared.changed, hint: 'examples/: run `npm run generate` (and refresh rest/openapi.json) and commit the output' }).toEqual({ changed: [], hint: expect.any(String) });
  });

  it('the manifest is keyed by each document\'s sha256, the id the typed documents carry', () => {
    const documents = JSON.parse(readFileSync(manifest, 'utf8')) as Record<string, string>;
    const ids = Object.keys(documents);
    expect(ids.length).toBeGreaterThanOrEqual(6);
    for (const [id, text] of Object.entries(documents)) expect(id).toBe(createHash('sha256').update(text).digest('hex'));
    const typed = readFileSync(join(examples, 'graphql', 'src', 'gql', 'graphql.ts'), 'utf8');
    expect([...typed.matchAll(/"__meta__":\{"hash":"([0-9a-f]{64})"\}/g)].map((m) => m[1]).sort()).toEqual([...ids].sort());
    expect(Object.values(documents).some((d) => d.startsWith('subscription CommentAdded('))).toBe(true);
  });

  it('type-check (tsc, which builds them too)', () => {
    const { tsc } = prepared;
    if (tsc.code !== 0) throw new Error(`tsc in examples/ exited ${tsc.code}:\n${tsc.stdout}\n${tsc.stderr}`);
    for (const main of ['dist/graphql/src/main.js', 'dist/rest/src/main.js']) expect(existsSync(join(examples, main))).toBe(true);
  });

  describe('Prism\'s mock server (npm run mock)', () => {
    /** Every schema (header, parameter, body) that has a pattern, with its path in the document. */
    function patterned(node: unknown, path: string, found: { path: string; pattern: string; example: unknown }[] = []) {
      if (Array.isArray(node)) node.forEach((n, i) => patterned(n, `${path}/${i}`, found));
      else if (node && typeof node === 'object') {
        const o = node as Record<string, unknown>;
        if (typeof o.pattern === 'string') found.push({ path, pattern: o.pattern, example: o.example });
        for (const [k, v] of Object.entries(o)) patterned(v, `${path}/${k}`, found);
      }
      return found;
    }

    it('every schema with a pattern has an example that matches it', () => {
      const found = patterned(buildOpenApiDocument(), '#');
      expect(found.map((f) => f.path)).toEqual(expect.arrayContaining(['#/components/headers/ETag/schema']));
      expect(found.filter((f) => typeof f.example !== 'string' || !new RegExp(f.pattern, 'u').test(f.example))).toEqual([]);
    });
  });
});
