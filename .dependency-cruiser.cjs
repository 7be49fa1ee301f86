// The layers of src/, declared once and checked by `npm run lint` (dependency-cruiser over the
// import graph, type-only imports included). test/layering.test.ts runs each rule on a fixture
// that breaks it, so a rule that stops matching fails the tests. docs/architecture.md#layers.

/** What a service must not see: the surfaces and their formats. */
const SURFACES = [
  // REST routes, GraphQL resolvers, REST presenters and helpers, GraphQL classes (@ObjectType, pages)
  '^src/modules/[^/]+/[^/]+\\.(routes|resolver|rest|graphql)\\.ts$',
  '^src/(http|graphql|openapi)/',
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      comment: 'No import cycle in src/, type-only imports included.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'services-format-free',
      comment: 'A service knows nothing of REST, GraphQL or HTTP: it imports no route, resolver, presenter, GraphQL class, http/ or graphql/.',
      severity: 'error',
      from: { path: '^src/modules/[^/]+/[^/]+\\.service\\.ts$' },
      to: { path: SURFACES },
    },
    {
      name: 'core-imports-nothing-above-it',
      comment: 'core/ is below the features and the surfaces.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: ['^src/(modules|http|graphql|openapi)/', '^src/(app|main|cluster|test-server)\\.ts$'] },
    },
    {
      name: 'http-apart-from-graphql',
      comment: 'The two surfaces share what is in core/, never each other.',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/graphql/' },
    },
    {
      name: 'graphql-apart-from-http',
      comment: 'The two surfaces share what is in core/, never each other.',
      severity: 'error',
      from: { path: '^src/graphql/' },
      to: { path: '^src/http/' },
    },
    {
      name: 'sql-in-repositories',
      comment: 'Only db/ and the repositories run statements or write SQL (db/statements.ts, db/json-sql.ts); others may name the Statement type.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/db/', '^src/modules/[^/]+/[^/]+\\.repository\\.ts$'] },
      to: { path: '^src/db/(statements|json-sql)\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'driver-in-db',
      comment: "pg is db/'s: everything else reaches PostgreSQL through the ORM and db/.",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/db/' },
      to: { path: 'node_modules/(pg|kysely)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
