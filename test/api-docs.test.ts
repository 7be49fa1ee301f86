import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSchema, isObjectType, type GraphQLField } from 'graphql';
import { buildOpenApiDocument } from '../src/openapi/document';

/**
 * docs/api.md's tables against schema/schema.graphql and the OpenAPI document, both ways: every
 * route, GraphQL field, argument, body field and parameter a table names exists as written, and
 * every operation, field and parameter of the schema and the document is named by some table.
 * Each problem names the line of docs/api.md (or the operation or field nobody documents).
 */
const API_MD = join(__dirname, '..', 'docs', 'api.md');
const schema = buildSchema(readFileSync(join(__dirname, '..', 'schema', 'schema.graphql'), 'utf8'));
const openapi = buildOpenApiDocument();

type AnyRecord = Record<string, any>;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const ROOTS = ['Query', 'Mutation', 'Subscription'] as const;

// ---------------------------------------------------------------- the Markdown tables

interface Row {
  line: number;
  text: string;
  cells: Record<string, string>;
}
interface Table {
  line: number;
  header: string[];
  rows: Row[];
}

/** Splits a table line on the `|` that are not escaped (`\|` stays inside its cell, as `|`). */
function cellsOf(line: string): string[] {
  const out: string[] = [];
  let cell = '';
  const body = line.trim().replace(/^\|/, '').replace(/\|$/, '');
  for (let i = 0; i < body.length; i++) {
    if (body[i] === '\\' && body[i + 1] === '|') {
      cell += '|';
      i++;
    } else if (body[i] === '|') {
      out.push(cell.trim());
      cell = '';
    } else cell += body[i];
  }
  out.push(cell.trim());
  return out;
}

function tablesOf(markdown: string): Table[] {
  const lines = markdown.split('\n');
  const tables: Table[] = [];
  let inFence = false;
  for (let i = 0; i < lines.length; i++) {
    if (/^\s*```/.test(lines[i])) inFence = !inFence;
    if (inFence || !lines[i].startsWith('|') || !/^\|[\s:|-]+\|$/.test(lines[i + 1]?.trim() ?? '')) continue;
    const header = cellsOf(lines[i]);
    const table: Table = { line: i + 1, header, rows: [] };
    let j = i + 2;
    for (; j < lines.length && lines[j].startsWith('|'); j++) {
      const values = cellsOf(lines[j]);
      table.rows.push({ line: j + 1, text: lines[j], cells: Object.fromEntries(header.map((h, k) => [h, values[k] ?? ''])) });
    }
    tables.push(table);
    i = j - 1;
  }
  return tables;
}

const codeSpans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);

// ---------------------------------------------------------------- what a cell says

interface RestClaim {
  method: string | null; // null: a bare path in the URL table, every method of that path
  path: string; // OpenAPI spelling: /posts/{id}
  query: string[] | null; // `?a=&b=` written: exactly these query parameters
  body: { name: string; optional: boolean }[] | null; // `{a, b?}` written: exactly these body fields
}

/** `GET /posts/:id?page=` followed by an optional `{title?, body}` code span. */
function restClaims(cell: string): RestClaim[] {
  const claims: RestClaim[] = [];
  for (const span of codeSpans(cell)) {
    const body = /^\{(.*)\}$/.exec(span);
    if (body && claims.length) {
      claims[claims.length - 1].body = body[1]
        .split(',')
        .map((f) => f.trim())
        .filter(Boolean)
        .map((f) => ({ name: f.replace(/\?$/, ''), optional: f.endsWith('?') }));
      continue;
    }
    const route = /^(?:(GET|POST|PUT|PATCH|DELETE) )?(\/[^\s?]*)(?:\?(.*))?$/.exec(span);
    if (!route) continue;
    claims.push({
      method: route[1]?.toLowerCase() ?? null,
      path: route[2].replace(/:(\w+)/g, '{$1}'),
      query: route[3] === undefined ? null : route[3].split('&').map((p) => p.split('=')[0]),
      body: null,
    });
  }
  return claims;
}

interface GraphQLClaim {
  name: string;
  args: { name: string; type: string | null }[] | null; // null: written without parentheses
  type: string | null;
}

/** `name`, `name(a, b)`, `name(a: Int!): Type!` or `name: Type`. */
function graphqlClaims(cell: string): GraphQLClaim[] {
  return codeSpans(cell).flatMap((span) => {
    const m = /^(\w+)(?:\(([^)]*)\))?(?::\s*(.+))?$/.exec(span);
    if (!m) return [];
    const args =
      m[2] === undefined
        ? null
        : m[2]
            .split(',')
            .map((a) => a.trim())
            .filter(Boolean)
            .map((a) => {
              const [name, type] = a.split(':').map((s) => s.trim());
              return { name, type: type ?? null };
            });
    return [{ name: m[1], args, type: m[3]?.trim() ?? null }];
  });
}

// ---------------------------------------------------------------- the schema and the document

const rootFields = new Map<string, GraphQLField<unknown, unknown>>();
for (const root of ROOTS) {
  const type = schema.getType(root);
  if (isObjectType(type)) for (const field of Object.values(type.getFields())) rootFields.set(field.name, field);
}

const deref = (node: AnyRecord): AnyRecord => {
  if (!node?.$ref) return node;
  const [, , section, name] = (node.$ref as string).split('/');
  return (openapi.components as AnyRecord)[section][name];
};

interface Operation {
  key: string; // `PATCH /posts/{id}`
  method: string;
  path: string;
  params: { in: string; name: string }[];
  body: { name: string; optional: boolean }[] | null;
}

const operations: Operation[] = Object.entries(openapi.paths).flatMap(([path, item]) =>
  METHODS.filter((m) => (item as AnyRecord)[m]).map((method) => {
    const op = (item as AnyRecord)[method];
    const params = [...((item as AnyRecord).parameters ?? []), ...(op.parameters ?? [])].map(deref).map((p) => ({ in: p.in as string, name: p.name as string }));
    const bodySchema = op.requestBody ? deref(deref(op.requestBody).content['application/json'].schema) : null;
    const required = new Set<string>(bodySchema?.required ?? []);
    const body = bodySchema ? Object.keys(bodySchema.properties ?? {}).map((name) => ({ name, optional: !required.has(name) })) : null;
    return { key: `${method.toUpperCase()} ${path}`, method, path, params, body };
  }),
);

const fmtBody = (fields: { name: string; optional: boolean }[]) =>
  `{${[...fields]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((f) => f.name + (f.optional ? '?' : ''))
    .join(', ')}}`;
const sameSet = (a: string[], b: string[]) => a.length === b.length && [...a].sort().join() === [...b].sort().join();
const where = (row: Row) => `docs/api.md:${row.line} ${row.text.length > 110 ? `${row.text.slice(0, 110)}…` : row.text}`;

// ---------------------------------------------------------------- the comparison

/**
 * Header parameters and their GraphQL counterpart: a row that names an operation and a GraphQL
 * field names the header exactly when the field takes the argument.
 */
const HEADER_ARGS: Record<string, string> = { 'if-match': 'ifMatch', 'idempotency-key': 'idempotencyKey' };

/** Tables that say nothing about routes, fields or inputs (timings; content negotiation). */
const NOT_API = ['GET /posts over 100,000 posts', 'you send'];
/** The format table's names → the page types (GraphQL and OpenAPI) of each list. */
const FORMAT_TYPES: Record<string, string[]> = {
  page: ['PostPage', 'UserPage'],
  simple: ['PostSimplePage', 'UserSimplePage'],
  cursor: ['PostCursorPage', 'UserCursorPage'],
};
/** Filters of a list, described in prose next to the format table, not formats. */
const LIST_FILTERS = ['published', 'author'];

function compare(markdown: string): string[] {
  const problems: string[] = [];
  const covered = new Set<string>(); // operation keys named by some row
  const coveredQuery = new Set<string>(); // operation keys whose query parameters some row lists
  const coveredBody = new Set<string>(); // ... whose body some row lists
  const coveredHeaders = new Set<string>(); // `KEY header` checked against a GraphQL argument
  const coveredFields = new Set<string>(); // GraphQL root fields named by some row
  let formatRows: Row[] = [];

  const checkRest = (row: Row, cell: string): Operation[] => {
    const found: Operation[] = [];
    for (const claim of restClaims(cell)) {
      const ops = operations.filter((o) => o.path === claim.path && (claim.method === null || o.method === claim.method));
      const label = `${claim.method ? `${claim.method.toUpperCase()} ` : ''}${claim.path}`;
      if (!ops.length) {
        problems.push(`${where(row)}: ${label} is not in the OpenAPI document`);
        continue;
      }
      for (const op of ops) {
        covered.add(op.key);
        found.push(op);
        const query = op.params.filter((p) => p.in === 'query').map((p) => p.name);
        if (claim.query) {
          coveredQuery.add(op.key);
          const extra = claim.query.filter((q) => !query.includes(q));
          const missing = query.filter((q) => !claim.query!.includes(q));
          if (extra.length) problems.push(`${where(row)}: ${op.key} has no query parameter ${extra.join(', ')}`);
          if (missing.length) problems.push(`${where(row)}: ${op.key} leaves out the query parameter ${missing.join(', ')}`);
        }
        if (claim.body) {
          coveredBody.add(op.key);
          if (!op.body) problems.push(`${where(row)}: ${op.key} takes no body, the row gives ${fmtBody(claim.body)}`);
          else if (fmtBody(op.body) !== fmtBody(claim.body))
            problems.push(`${where(row)}: ${op.key}'s body is ${fmtBody(op.body)} in the OpenAPI document, the row says ${fmtBody(claim.body)}`);
        }
      }
    }
    return found;
  };

  const checkGraphQL = (row: Row, cell: string): GraphQLClaim[] => {
    const claims = graphqlClaims(cell);
    for (const claim of claims) {
      const field = rootFields.get(claim.name);
      if (!field) {
        problems.push(`${where(row)}: ${claim.name} is not a Query, Mutation or Subscription field of the schema`);
        continue;
      }
      coveredFields.add(claim.name);
      const args = field.args.map((a) => a.name);
      const written = claim.args?.map((a) => a.name) ?? [];
      if (!sameSet(args, written))
        problems.push(`${where(row)}: ${claim.name} takes (${[...args].sort().join(', ')}) in the schema, the row says (${[...written].sort().join(', ')})`);
      for (const a of claim.args ?? []) {
        const actual = field.args.find((x) => x.name === a.name);
        if (a.type && actual && String(actual.type) !== a.type) problems.push(`${where(row)}: ${claim.name}'s ${a.name} is ${String(actual.type)}, the row says ${a.type}`);
      }
      if (claim.type && String(field.type) !== claim.type) problems.push(`${where(row)}: ${claim.name} returns ${String(field.type)}, the row says ${claim.type}`);
    }
    return claims;
  };

  const checkHeaders = (row: Row, ops: Operation[], fields: GraphQLClaim[]) => {
    for (const op of ops)
      for (const [header, arg] of Object.entries(HEADER_ARGS)) {
        const hasHeader = op.params.some((p) => p.in === 'header' && p.name.toLowerCase() === header);
        for (const f of fields) {
          const field = rootFields.get(f.name);
          if (!field) continue;
          const hasArg = field.args.some((a) => a.name === arg);
          if (hasHeader !== hasArg) problems.push(`${where(row)}: ${op.key} ${hasHeader ? 'takes' : 'does not take'} ${header} but ${f.name} ${hasArg ? 'takes' : 'does not take'} ${arg}`);
        }
        if (hasHeader && fields.length) coveredHeaders.add(`${op.key} ${header}`);
      }
  };

  for (const table of tablesOf(markdown)) {
    const [first] = table.header;
    if (NOT_API.includes(first)) continue;
    for (const row of table.rows) {
      if (first === 'URL') {
        for (const span of codeSpans(row.cells.URL)) if (!/^((GET|POST|PUT|PATCH|DELETE) )?\/|^ws:\/\//.test(span) && !/^\{.*\}$/.test(span)) problems.push(`${where(row)}: \`${span}\` is not a route`);
        checkRest(row, row.cells.URL);
      } else if (first === 'REST') {
        const ops = checkRest(row, row.cells.REST);
        if (!ops.length) problems.push(`${where(row)}: names no route of the OpenAPI document`);
        const fields = checkGraphQL(row, row.cells.GraphQL);
        if (!fields.length) problems.push(`${where(row)}: names no GraphQL field`);
        checkHeaders(row, ops, fields);
        if (table.header.includes('needs')) {
          // The tenant table: "a tenant" is the x-tenant-id header.
          const needsTenant = /\ba tenant\b/.test(row.cells.needs);
          for (const op of ops) {
            const hasTenant = op.params.some((p) => p.in === 'header' && p.name.toLowerCase() === 'x-tenant-id');
            if (needsTenant !== hasTenant) problems.push(`${where(row)}: says ${needsTenant ? '' : 'no '}tenant, ${op.key} ${hasTenant ? 'takes' : 'does not take'} x-tenant-id`);
            if (hasTenant) coveredHeaders.add(`${op.key} x-tenant-id`);
          }
        }
      } else if (first === 'field') {
        const fields = checkGraphQL(row, row.cells.field);
        for (const f of fields)
          if (!(schema.getSubscriptionType()?.getFields() ?? {})[f.name]) problems.push(`${where(row)}: ${f.name} is not a Subscription field`);
      } else if (first === 'format') {
        formatRows = table.rows;
      } else problems.push(`docs/api.md:${table.line}: a table this test does not know (${table.header.join(' | ')}): teach test/api-docs.test.ts to compare it`);
    }
  }

  // The page formats: fields of each page type, and the query parameters of every list.
  const formatQuery = new Set<string>(['paginate']);
  for (const row of formatRows) {
    const format = codeSpans(row.cells.format)[0];
    const types = FORMAT_TYPES[format];
    if (!types) {
      problems.push(`${where(row)}: unknown format ${format}`);
      continue;
    }
    for (const q of codeSpans(row.cells.query)) formatQuery.add(q.split('=')[0]);
    const answer = row.cells.answer.replace(/`/g, '').split(',').map((s) => s.trim());
    for (const name of types) {
      const gql = schema.getType(name);
      const gqlFields = isObjectType(gql) ? Object.keys(gql.getFields()) : [];
      if (!sameSet(gqlFields, answer)) problems.push(`${where(row)}: GraphQL ${name} has (${gqlFields.sort().join(', ')}), the row says (${[...answer].sort().join(', ')})`);
      const oaFields = Object.keys((openapi.components.schemas as AnyRecord)[name]?.properties ?? {});
      if (!sameSet(oaFields, answer)) problems.push(`${where(row)}: OpenAPI ${name} has (${oaFields.sort().join(', ')}), the row says (${[...answer].sort().join(', ')})`);
    }
    // Every list field of this format takes the format's parameters (plus the filters).
    const suffix = { page: '', simple: 'Simple', cursor: 'Cursor' }[format];
    const params = codeSpans(row.cells.query).map((q) => q.split('=')[0]);
    for (const list of ['posts', 'trash', 'adminUsers']) {
      const field = rootFields.get(list + suffix);
      if (!field) problems.push(`${where(row)}: no GraphQL field ${list + suffix}`);
      else {
        const args = field.args.map((a) => a.name).filter((a) => !LIST_FILTERS.includes(a));
        if (!sameSet(args, params)) problems.push(`${where(row)}: ${list + suffix} takes (${args.sort().join(', ')}) besides filters, the row says (${[...params].sort().join(', ')})`);
      }
    }
  }
  if (!formatRows.length) problems.push('docs/api.md: the list formats table (format | query | answer) is missing');
  for (const op of operations.filter((o) => o.params.some((p) => p.name === 'paginate'))) {
    const query = op.params.filter((p) => p.in === 'query').map((p) => p.name).filter((p) => !LIST_FILTERS.includes(p));
    if (!sameSet(query, [...formatQuery])) problems.push(`the list formats table: ${op.key} takes (${query.sort().join(', ')}) besides filters, the table gives (${[...formatQuery].sort().join(', ')})`);
  }

  // The public reads (If-None-Match) are the ones the HTTP caching section lists.
  const publicReads = /\*\*Public reads\*\* are ([^\n]+(?:\n {2,}[^\n]+)*)/.exec(markdown);
  const revalidated = new Set(publicReads ? restClaims(publicReads[1]).map((c) => `${c.method?.toUpperCase()} ${c.path}`) : []);
  if (!publicReads) problems.push('docs/api.md: the HTTP caching section no longer lists the **Public reads**');
  for (const op of operations) {
    const takes = op.params.some((p) => p.in === 'header' && p.name.toLowerCase() === 'if-none-match');
    if (takes) coveredHeaders.add(`${op.key} if-none-match`);
    if (takes !== revalidated.has(op.key)) problems.push(`docs/api.md, HTTP caching: ${op.key} ${takes ? 'takes' : 'does not take'} If-None-Match but is ${takes ? 'not ' : ''}listed among the public reads`);
  }

  // Nothing in the schema or the document that no table names.
  for (const op of operations) {
    if (!covered.has(op.key)) problems.push(`${op.key} (OpenAPI) is in no table of docs/api.md`);
    if (op.params.some((p) => p.in === 'query') && !coveredQuery.has(op.key))
      problems.push(`${op.key} (OpenAPI) takes query parameters (${op.params.filter((p) => p.in === 'query').map((p) => p.name).join(', ')}) that no row of docs/api.md lists (\`${op.method.toUpperCase()} ${op.path}?a=&b=\`)`);
    if (op.body && !coveredBody.has(op.key)) problems.push(`${op.key} (OpenAPI) takes a body ${fmtBody(op.body)} that no row of docs/api.md gives`);
    for (const p of op.params.filter((x) => x.in === 'header'))
      if (!coveredHeaders.has(`${op.key} ${p.name.toLowerCase()}`)) problems.push(`${op.key} (OpenAPI) takes the header ${p.name}, which no row of docs/api.md accounts for`);
  }
  for (const name of rootFields.keys()) if (!coveredFields.has(name)) problems.push(`${name} (schema) is in no table of docs/api.md`);
  return problems;
}

describe('docs/api.md', () => {
  const markdown = readFileSync(API_MD, 'utf8');

  it('has the tables this test reads', () => {
    const headers = tablesOf(markdown).map((t) => t.header[0]);
    for (const h of ['URL', 'REST', 'format', 'field']) expect(headers).toContain(h);
  });

  it('agrees with schema/schema.graphql and the OpenAPI document, both ways', () => {
    expect(compare(markdown)).toEqual([]);
  });

  it('notices a row that disagrees (the comparison can fail)', () => {
    const broken = markdown
      .replace('`updatePost(id, title, body, ifMatch)`', '`updatePost(id, title, body)`')
      .replace('`PATCH /auth/me` `{name}`', '`PATCH /auth/me` `{name, email}`')
      .replace('| `DELETE /trash` | `purgeTrash` | moderator or admin |\n', '');
    expect(broken).not.toBe(markdown);
    const problems = compare(broken);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^docs\/api\.md:\d+ .*updatePost takes \(body, id, ifMatch, title\) in the schema, the row says \(body, id, title\)/),
        expect.stringMatching(/^docs\/api\.md:\d+ .*PATCH \/auth\/me's body is \{name\} in the OpenAPI document, the row says \{email, name\}/),
        'purgeTrash (schema) is in no table of docs/api.md',
      ]),
    );
  });
});
