import { createHash } from 'node:crypto';
import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * A document's id: the sha256 hex of its text as written in the manifest (the preset's own
 * 'sha256' would write `sha256:<hex>` keys; the service's manifest is keyed by the bare hex, and
 * takes `documentId` as `<hex>` or `sha256:<hex>`).
 */
const sha256hex = (document: string) => createHash('sha256').update(document).digest('hex');

/**
 * GraphQL Code Generator's client preset: typed documents for every `graphql(...)` call in
 * graphql/src, and `persisted-documents.json`, the trusted documents manifest
 * ({ "<sha256 hex>": "<document>" }) the service loads with GRAPHQL_DOCUMENTS.
 *
 * Run from examples/: `npm run codegen`. The output is committed, and test/examples.test.ts
 * fails when a regeneration differs from it.
 */
const config: CodegenConfig = {
  schema: '../schema/schema.graphql',
  documents: ['graphql/src/**/*.ts', '!graphql/src/gql/**'],
  ignoreNoDocuments: false,
  // Imports end in .js, as Node's ESM resolution (module: nodenext) wants.
  emitLegacyCommonJSImports: false,
  generates: {
    'graphql/src/gql/': {
      preset: 'client',
      presetConfig: {
        // Masking keeps a fragment's fields private to its component; these examples have no components.
        fragmentMasking: false,
        // Each typed document keeps its text and carries its id (document.__meta__.hash): a client
        // sends the id (trusted documents) or the text, from one build. For a production bundle
        // without the texts, use mode: 'replaceDocumentWithHash'.
        persistedDocuments: { mode: 'embedHashInDocument', hashPropertyName: 'hash', hashAlgorithm: sha256hex },
      },
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        strictScalars: true,
        // DateTimeISO travels as an ISO-8601 string in JSON.
        scalars: { DateTimeISO: 'string' },
      },
    },
  },
};

export default config;
