// Which test files start processes of their own, for `npm run test:quick` (scripts/test.mjs).
// CommonJS, so that test/suite-hygiene.test.ts (jest) can load it too.
//
// A file starts processes when it, or a module of this repository it imports (test/support/,
// src/, bench/, scripts/, followed import by import), imports `node:child_process` or
// `playwright-core`: `npm start` in a copy, the built service, a PostgreSQL of its own, a
// browser, PgBouncer, Prism, a nested `npm test`. The quick run leaves those out and runs the
// rest: every file that talks to the in-process app (test/support/harness.ts) over the run's one
// PostgreSQL. Type-only imports (`import type`) load nothing and are not followed.
const { existsSync, readdirSync, readFileSync, statSync } = require('node:fs');
const { dirname, join, relative, resolve } = require('node:path');

const SPAWNERS = /^(?:node:)?child_process$|^playwright-core$/;
const IMPORT = /^\s*(?:import|export)\s+(?!type\b)[^'";]*?\bfrom\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|\brequire\(\s*['"]([^'"]+)['"]\s*\)/gm;

/** The file a relative import names (`./x` is x.ts, x.js, x.mjs, x.cjs or x/index.ts). */
function resolveLocal(from, spec) {
  const base = resolve(dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, `${base}.js`, `${base}.mjs`, `${base}.cjs`, join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

/** The import chain from `file` to a process-starting module, or null when there is none. */
function processChain(file, seen = new Set()) {
  if (seen.has(file)) return null;
  seen.add(file);
  for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (SPAWNERS.test(spec)) return [file, spec];
    const local = spec.startsWith('.') ? resolveLocal(file, spec) : null;
    const chain = local && processChain(local, seen);
    if (chain) return [file, ...chain];
  }
  return null;
}

/** Every test file jest runs (`test/**\/*.test.ts`), relative to `root`, sorted. */
function testFiles(root) {
  const found = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.test.ts')) found.push(relative(root, path));
    }
  };
  walk(join(root, 'test'));
  return found;
}

/** The test files that start processes of their own: what `npm run test:quick` leaves out. */
function processFiles(root) {
  return testFiles(root).filter((f) => processChain(join(root, f)));
}

/** One pattern for jest's --testPathIgnorePatterns that matches exactly `files` (paths from the root). */
function exactly(files) {
  const escape = (f) => f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return `/(?:${files.map(escape).join('|')})$`;
}

module.exports = { processChain, testFiles, processFiles, exactly };
