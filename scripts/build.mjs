// Transpiles the TypeScript sources to dist/ with swc: about a second, so `npm start` stays quick.
// Type checking is `npm run typecheck` (run by `npm test`), not part of the start path.
import { readFileSync, readdirSync, mkdirSync, writeFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformFileSync } from '@swc/core';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist');
const swcrc = JSON.parse(readFileSync(join(root, '.swcrc'), 'utf8'));
delete swcrc.$schema;

function* walk(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    // bench/postgraphile and bench/postgraphile5 have node_modules of their own (separate packages).
    if (statSync(p).isDirectory()) { if (name !== 'node_modules') yield* walk(p); }
    else if (p.endsWith('.ts') && !p.endsWith('.d.ts')) yield p;
  }
}

rmSync(out, { recursive: true, force: true });
const inputs = [join(root, 'mikro-orm.config.ts')];
for (const dir of ['src', 'scripts', 'bench']) {
  try { inputs.push(...walk(join(root, dir))); } catch { /* folder absent */ }
}
for (const file of inputs) {
  const target = join(out, relative(root, file)).replace(/\.ts$/, '.js');
  const { code, map } = transformFileSync(file, { ...swcrc, swcrc: false, filename: file, sourceFileName: relative(dirname(target), file) });
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, code + `\n//# sourceMappingURL=${target.split('/').pop()}.map\n`);
  if (map) writeFileSync(target + '.map', map);
}
