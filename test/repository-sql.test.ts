import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { CATALOGUE, layOut, repositorySql } from '../scripts/sql';
import { createTestDatabase } from './support/harness';

/**
 * Every statement checked in (docs/architecture.md, "Repositories"): `npm run sql` writes the SQL
 * each repository sends next to it (<f>.repository.sql); this regenerates it on a database of
 * its own and fails when the code's statements and the committed files differ, so a change to a
 * query shows up in review as a change to a .sql file.
 */
const root = join(__dirname, '..');

/** Every *.repository.ts under src/modules, as paths from the repository's root. */
function repositories(dir = join(root, 'src', 'modules')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? repositories(join(dir, e.name)) : e.name.endsWith('.repository.ts') ? [relative(root, join(dir, e.name))] : [],
  );
}

it('every repository and every function it exports is in the catalogue of npm run sql (scripts/sql.ts)', () => {
  expect(Object.keys(CATALOGUE).sort()).toEqual(repositories().sort());
  for (const [path, functions] of Object.entries(CATALOGUE)) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the module named by the catalogue's key
    const exported = Object.entries(require(join(root, path)) as Record<string, unknown>).filter(([, v]) => typeof v === 'function').map(([k]) => k);
    expect({ path, functions: Object.keys(functions).sort() }).toEqual({ path, functions: exported.sort() });
  }
});

it('the committed .sql files are what the repositories send now (else: npm run sql)', async () => {
  const files = await repositorySql(await createTestDatabase());
  expect([...files.keys()].sort()).toEqual(repositories().map((p) => p.replace(/\.ts$/, '.sql')).sort());
  for (const [path, text] of files) expect({ path, text }).toEqual({ path, text: readFileSync(join(root, path), 'utf8') });
});

it('lays out a statement by its own clauses, not those of its sub-queries or strings', () => {
  expect(layOut(`select x.id, 'a from b' as s from (select id from t where id = $1) x where x.id > 0 order by x.id limit 10`)).toBe(
    `select x.id, 'a from b' as s\nfrom (select id from t where id = $1) x\nwhere x.id > 0\norder by x.id\nlimit 10`,
  );
});
