import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

/**
 * The layering of src/ (docs/architecture.md, "Layers"): declared once in .dependency-cruiser.cjs,
 * which `npm run lint` runs on src/; here each rule runs on a fixture that breaks it, so a rule
 * that stops matching fails. And SQL lives in the repositories, db/ and the migrations only.
 */
const root = join(__dirname, '..');

describe('the layers (.dependency-cruiser.cjs)', () => {
  /** Each file of the fixture and what it imports (`type:` a type-only import): every rule broken once, and files that break none. */
  const FIXTURE: Record<string, string[]> = {
    'src/app.ts': [],
    'src/core/c.ts': ['../modules/b/b.types', 'type:../app', '../db/json-sql', 'pg'],
    'src/core/ok.ts': ['./t1', '../db/list-totals'],
    'src/core/t1.ts': ['type:./t2'],
    'src/core/t2.ts': ['type:./t1'],
    'src/db/statements.ts': ['pg'],
    'src/db/json-sql.ts': [],
    'src/db/list-totals.ts': ['./statements'],
    'src/http/h.ts': ['../graphql/g2', '../core/ok'],
    'src/http/h2.ts': [],
    'src/graphql/g.ts': ['type:../http/h2', '../core/ok'],
    'src/graphql/g2.ts': [],
    // A service importing every surface, and one importing only what it may.
    ...Object.fromEntries(['routes', 'resolver', 'rest', 'graphql', 'types', 'repository', 'loaders'].map((p) => [`src/modules/a/a.${p}.ts`, []])),
    'src/modules/a/a.service.ts': ['./a.routes', './a.resolver', './a.rest', 'type:./a.graphql', '../../http/h', 'type:../../graphql/g', './a.types'],
    'src/modules/b/b.types.ts': [],
    'src/modules/b/b.repository.ts': ['../../db/statements', '../../db/json-sql'],
    'src/modules/b/b.loaders.ts': ['../../db/statements', './b.repository'],
    'src/modules/b/b.rest.ts': ['type:../../db/statements'],
    'src/modules/b/b.service.ts': ['./b.repository', './b.types', '../../core/ok', 'type:../../db/statements', '../a/a.types'],
  };
  let violations: string[];

  /** Writes FIXTURE as src/ of a folder of its own and runs `npm run lint`'s dependency-cruiser on it. */
  beforeAll(() => {
    const dir = mkdtempSync(join(tmpdir(), 'layering-'));
    try {
      // pg resolves as in the repository, so the driver rule sees node_modules/pg.
      symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'node20', moduleResolution: 'node16', strict: true } }));
      for (const [path, imports] of Object.entries(FIXTURE)) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        const lines = imports.map((spec, i) => (spec.startsWith('type:') ? `import type { T as T${i} } from '${spec.slice(5)}';` : `import * as m${i} from '${spec}';`));
        writeFileSync(join(dir, path), [...lines, 'export type T = number;', 'export const v = 1;', ''].join('\n'));
      }
      const cli = join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruiser.mjs');
      const run = spawnSync(process.execPath, [cli, 'src', '--config', join(root, '.dependency-cruiser.cjs'), '--output-type', 'json'], { cwd: dir, encoding: 'utf8' });
      if (!run.stdout) throw new Error(`dependency-cruiser: ${run.stderr}`);
      const report = JSON.parse(run.stdout) as { summary: { violations: { rule: { name: string }; from: string; to: string }[] } };
      violations = report.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to.replace(/^.*node_modules\//, 'node_modules/')}`).sort();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  const broken = (rule: string) => violations.filter((v) => v.startsWith(`${rule}: `));

  it('a service importing a route, resolver, REST presenter, GraphQL class, http/ or graphql/ fails; its repository, types, core/ and db/ types do not', () => {
    expect(broken('services-format-free')).toEqual(
      ['src/graphql/g.ts', 'src/http/h.ts', 'src/modules/a/a.graphql.ts', 'src/modules/a/a.resolver.ts', 'src/modules/a/a.rest.ts', 'src/modules/a/a.routes.ts'].map(
        (to) => `services-format-free: src/modules/a/a.service.ts → ${to}`,
      ),
    );
  });

  it('core/ imports nothing above it; http/ and graphql/ never each other; no cycle, type-only imports included', () => {
    expect(broken('core-imports-nothing-above-it')).toEqual(['core-imports-nothing-above-it: src/core/c.ts → src/app.ts', 'core-imports-nothing-above-it: src/core/c.ts → src/modules/b/b.types.ts']);
    expect(broken('http-apart-from-graphql')).toEqual(['http-apart-from-graphql: src/http/h.ts → src/graphql/g2.ts']);
    expect(broken('graphql-apart-from-http')).toEqual(['graphql-apart-from-http: src/graphql/g.ts → src/http/h2.ts']);
    expect(broken('no-cycle')).toEqual([expect.stringMatching(/^no-cycle: src\/core\/t[12]\.ts → src\/core\/t[12]\.ts$/)]);
  });

  it('only db/ and the repositories import the runner (the Statement type aside), only db/ the driver; nothing else is reported', () => {
    expect(broken('sql-in-repositories')).toEqual(['sql-in-repositories: src/core/c.ts → src/db/json-sql.ts', 'sql-in-repositories: src/modules/b/b.loaders.ts → src/db/statements.ts']);
    expect(broken('driver-in-db')).toEqual([expect.stringMatching(/^driver-in-db: src\/core\/c\.ts → node_modules\/pg\//)]);
    expect(violations).toHaveLength(14);
  });

  it('GraphQL classes are in files the services rule knows: @ObjectType and @Resolver only in *.graphql.ts, *.resolver.ts and graphql/', () => {
    const misplaced = sourceFiles(join(root, 'src'))
      .filter((f) => /@(ObjectType|InputType|Resolver)\(/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(root, f))
      .filter((f) => !/^src\/graphql\/|\.(graphql|resolver)\.ts$/.test(f));
    expect(misplaced).toEqual([]);
  });
});

/** Every .ts file under `dir`. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/**
 * A SQL statement at the start of a string (after spaces or a parenthesis): `select` followed by
 * a column list, a call or `*`; `insert into`; `update <table> set`; `delete from`; `with <name> as (`.
 * Words alone (a message's "deleted", a method 'delete', "Select a page") are not statements.
 */
const STATEMENT = /^[\s(]*(select\s+(distinct\s+|\*|[\w".]+\s*(\(|,|\s+as\s|\s+from\s))|insert\s+into\s|update\s+[\w".]+\s+set\s|delete\s+from\s|with\s+(recursive\s+)?[\w"]+\s+as\s*\()/i;

/** The statements in the string literals and templates of `source` (comments are not strings), as `line: text`. */
function sqlStrings(file: string, source: string): string[] {
  const found: string[] = [];
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node) => {
    let text: string | undefined;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) text = node.text;
    else if (ts.isTemplateExpression(node)) text = node.head.text + node.templateSpans.map((s) => `x${s.literal.text}`).join('');
    if (text !== undefined && STATEMENT.test(text)) found.push(`${sf.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${text.trim().slice(0, 60)}`);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

describe('SQL text lives in the repositories, db/ and the migrations', () => {
  it('the check fires on statements in strings and templates, not on prose, comments or messages', () => {
    const control = [
      `const a = 'select id, title from posts where id = ?';`,
      'const b = `SELECT count(*) AS n FROM gone`;',
      'const c = `insert into rate_attempts (key) values (${key})`;',
      "const d = sql`update mail_outbox set sent_at = now() where id = ${id}`;",
      "const e = 'delete from posts where deleted_at is not null';",
      'const f = `with gone as (delete from t returning 1) select count(*) from gone`;',
      "const g = '(select sum(\"v\")::text from \"page_versions\")';",
      'const h = `select ${columns} from users`;',
    ].join('\n');
    expect(sqlStrings('control.ts', control).map((l) => l.split(':')[0])).toEqual(['1', '2', '3', '4', '5', '6', '7', '8']);
    const prose = [
      '// select the rows, then update the page: delete from the cache what changed',
      '/** Posts are deleted with a select from the trash; update the docs. */',
      "const m = { message: 'Post deleted', method: 'delete', verb: 'update' };",
      "const n = 'Select a page to update, or delete from your list';",
      "const o = `Deleted ${count} posts`; const p = 'with a token';",
    ].join('\n');
    expect(sqlStrings('prose.ts', prose)).toEqual([]);
  });

  it('finds none anywhere else in src/, and finds the repositories\' own', () => {
    const outside: string[] = [];
    let inside = 0;
    for (const file of sourceFiles(join(root, 'src'))) {
      const found = sqlStrings(file, readFileSync(file, 'utf8'));
      const path = relative(root, file);
      if (/^src\/db\/|\.repository\.ts$/.test(path)) inside += found.length;
      else outside.push(...found.map((f) => `${path}:${f}`));
    }
    expect(outside).toEqual([]);
    // The check reads the real sources: the repositories and db/ hold dozens of statements.
    expect(inside).toBeGreaterThan(30);
  });
});
