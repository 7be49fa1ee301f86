import { join, relative } from 'node:path';
import { BLOCKS, renderDocs, type BlockName } from './doc-blocks';

/**
 * `npm run docs:render [-- <block>...]`: rewrites the rendered blocks of README.md and docs/*.md
 * (all, or the named ones: bench, bench-node26, bench-rate, memory, suite, ci) from their sources (scripts/doc-blocks.ts) and names
 * the pages it changed. test/docs.test.ts fails until this has run after a source changed.
 */
const root = join(__dirname, '..', '..');
const names = process.argv.slice(2);
const unknown = names.filter((n) => !(n in BLOCKS));
if (unknown.length) {
  process.stderr.write(`unknown block ${unknown.join(', ')} (blocks: ${Object.keys(BLOCKS).join(', ')})\n`);
  process.exit(2);
}
const changed = renderDocs(root, names.length ? (names as BlockName[]) : undefined);
process.stdout.write(changed.length ? `rewrote ${changed.map((p) => relative(root, p)).join(', ')}\n` : 'every rendered block is up to date\n');
