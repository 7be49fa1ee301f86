import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderBenchSummary, type BenchResults } from '../bench/results-render';
import { renderMemory, type MemoryResults } from '../bench/memory-render';

/**
 * The blocks of README.md and docs/*.md that are rendered from a source instead of written by
 * hand: every figure the docs state (the bench's, the test suite's size, CI's durations) lives in
 * one such block, so it is never typed twice and never goes stale unnoticed.
 *
 * A block is marked in the Markdown as
 *
 *     <!-- bench:start (anything up to the end of the comment) -->
 *     ...rendered text...
 *     <!-- bench:end -->
 *
 * A start marker at the end of its line makes a block of whole lines; a start marker followed by
 * text on the same line makes an inline block (a number inside a sentence). `renderBlocks`
 * replaces each block's text with its renderer's output; `npm run docs:render` writes every block
 * (scripts/render-docs.ts), `npm run bench` the block of its run (bench/run.ts), `npm run bench:memory`
 * the memory block (bench/memory.ts) and `.ci/run` CI's, and
 * test/docs.test.ts fails when re-rendering a page would change it. Each renderer is a pure
 * function of its source; this module only reads the sources.
 */
export const BLOCKS = {
  /** bench/results/latest.json, as `npm run bench` writes it. */
  bench: (root: string) => renderBenchSummary(JSON.parse(readFileSync(join(root, 'bench', 'results', 'latest.json'), 'utf8')) as BenchResults),
  /** bench/results/node26.json, as `npm run bench -- --node <Node 26>` writes it; a line saying so while there is none. */
  'bench-node26': (root: string) => otherRun(root, 'node26', 'run on Node 26 (`npm run bench -- --node <path of a Node 26 binary>`)'),
  /** bench/results/fixed-rate.json, as `npm run bench -- --rate N` writes it; a line saying so while there is none. */
  'bench-rate': (root: string) => otherRun(root, 'fixed-rate', 'fixed-rate run (`npm run bench -- --rate N`)'),
  /** bench/results/memory.json, as `npm run bench:memory` writes it; a line saying so while there is none. */
  memory: (root: string) => {
    const file = join(root, 'bench', 'results', 'memory.json');
    return existsSync(file)
      ? renderMemory(JSON.parse(readFileSync(file, 'utf8')) as MemoryResults)
      : 'No `npm run bench:memory` is recorded yet: it writes `bench/results/memory.json`, and this block is rendered from that file.';
  },
  /** The test tree: the files jest runs (jest.config.js: `test/**\/*.test.ts`). */
  suite: (root: string) => renderSuite(testFiles(root)),
  /** .ci/last-run.json, as `bash .ci/run` writes it when it ends; a line saying so while no run is recorded. */
  ci: (root: string) => {
    const file = join(root, '.ci', 'last-run.json');
    return renderCiRun(existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as CiRun) : null);
  },
  /** test/results/durations.json, as `npm run test:record` writes it; a line saying so while none is recorded. */
  tests: (root: string) => {
    const file = join(root, 'test', 'results', 'durations.json');
    return renderTestDurations(existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as TestDurations) : null);
  },
} satisfies Record<string, (root: string) => string>;

export type BlockName = keyof typeof BLOCKS;

/** The summary of bench/results/<name>.json (a run beside the Node 24 one at full load), or a line saying none is recorded. */
function otherRun(root: string, name: string, what: string): string {
  const file = join(root, 'bench', 'results', `${name}.json`);
  if (!existsSync(file)) return `No ${what} is recorded yet: it writes \`bench/results/${name}.json\`, and this block is rendered from that file.`;
  return renderBenchSummary(JSON.parse(readFileSync(file, 'utf8')) as BenchResults);
}

/** The pages that may carry blocks: README.md and docs/*.md. */
export function pages(root: string): string[] {
  const docs = join(root, 'docs');
  return [
    join(root, 'README.md'),
    ...readdirSync(docs)
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => join(docs, f)),
  ];
}

const BLOCK = /<!-- ([a-z][a-z0-9-]*):start(?:\s[^>]*?)? -->([\s\S]*?)<!-- \1:end -->/g;
const START = /<!-- ([a-z][a-z0-9-]*):start(?:\s[^>]*?)? -->/g;

export interface Block {
  name: string;
  /** The text between the markers, as the page has it. */
  text: string;
  /** Whether the block sits inside a line (an inline number) rather than on lines of its own. */
  inline: boolean;
}

/** The blocks of a page, in order; throws on a start marker without its end or an unknown name. */
export function blocksOf(markdown: string): Block[] {
  const blocks = [...markdown.matchAll(BLOCK)].map((m) => ({ name: m[1], text: m[2], inline: !m[2].startsWith('\n') }));
  const starts = [...markdown.matchAll(START)].map((m) => m[1]);
  if (starts.length !== blocks.length) throw new Error(`a block start marker without its end (starts: ${starts.join(', ')})`);
  for (const b of blocks) if (!(b.name in BLOCKS)) throw new Error(`unknown block "${b.name}" (known: ${Object.keys(BLOCKS).join(', ')})`);
  return blocks;
}

/** `markdown` with every block's text taken out (its markers kept): what a page says by hand. */
export function outsideBlocks(markdown: string): string {
  blocksOf(markdown);
  return markdown.replace(BLOCK, (_whole, name: string) => `<!-- ${name}:start --><!-- ${name}:end -->`);
}

/**
 * `markdown` with the text of every block (of `only`'s names, or all) replaced by `render(name)`:
 * an inline block's text is the rendering itself, a block of lines has it on lines of its own
 * (nothing between the markers' lines when the rendering is empty).
 */
export function renderBlocks(markdown: string, render: (name: BlockName) => string, only?: readonly BlockName[]): string {
  blocksOf(markdown);
  return markdown.replace(BLOCK, (whole, name: BlockName, text: string) => {
    if (only && !only.includes(name)) return whole;
    const rendered = render(name);
    const start = whole.slice(0, whole.length - text.length - `<!-- ${name}:end -->`.length);
    if (!text.startsWith('\n')) {
      if (rendered.includes('\n')) throw new Error(`block "${name}" renders several lines: put its start marker at the end of a line`);
      return `${start}${rendered}<!-- ${name}:end -->`;
    }
    return `${start}\n${rendered ? `${rendered}\n` : ''}<!-- ${name}:end -->`;
  });
}

/** Renders every block (or `only`'s) of every page from its source; returns the pages it changed. */
export function renderDocs(root: string, only?: readonly BlockName[]): string[] {
  const cache = new Map<BlockName, string>();
  const render = (name: BlockName) => {
    if (!cache.has(name)) cache.set(name, BLOCKS[name](root));
    return cache.get(name)!;
  };
  const changed: string[] = [];
  for (const page of pages(root)) {
    const before = readFileSync(page, 'utf8');
    const after = renderBlocks(before, render, only);
    if (after !== before) {
      writeFileSync(page, after);
      changed.push(page);
    }
  }
  return changed;
}

/** Every test file jest runs: `*.test.ts` anywhere under test/, as paths relative to the root. */
export function testFiles(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path, `${rel}${name}/`);
      else if (name.endsWith('.test.ts')) found.push(`${rel}${name}`);
    }
  };
  walk(join(root, 'test'), 'test/');
  return found;
}

/** The suite's size as the docs state it: its files (a count of tests needs a run: the ci block has it, from .ci/last-run.json). */
export function renderSuite(files: readonly string[]): string {
  const browser = files.filter((f) => f.endsWith('.browser.test.ts')).length;
  return `${files.length} test files (${browser} of them in Chromium)`;
}

/** What `.ci/run` records when it ends (.ci/last-run.json). */
export interface CiRun {
  /** When it ended (ISO 8601, UTC). */
  date: string;
  /** The commit it ran on (HEAD of the checkout). */
  commit: string;
  /**
   * Each Node line in the order run: its label, the Node the npm scripts ran on, its seconds and
   * result, and the tests jest counted in its `npm test` (null when it did not get that far; absent
   * in a record written before .ci/run counted them).
   */
  lines: { label: string; node: string; seconds: number; result: 'PASSED' | 'FAILED'; tests?: number | null }[];
  totalSeconds: number;
}

const duration = (seconds: number) => (seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`);

/**
 * The README's line about CI's durations. While no run is recorded (a checkout before its first
 * `bash .ci/run`), it says so: .ci/run writes .ci/last-run.json when it ends and renders this block.
 */
export function renderCiRun(run: CiRun | null): string {
  if (!run) return 'No `bash .ci/run` is recorded yet: it writes `.ci/last-run.json` when it ends (each Node line\'s Node, result, duration and count of tests), and this line is rendered from that file.';
  const lines = run.lines.map((l) => `Node line ${l.label}: ${l.result} in ${duration(l.seconds)} (npm scripts on ${l.node}${typeof l.tests === 'number' ? `, ${l.tests} tests` : ''})`);
  return (
    `The last recorded \`bash .ci/run\` (\`.ci/last-run.json\`: ${run.date.slice(0, 10)}, commit ${run.commit.slice(0, 10)}, this machine): ` +
    `${lines.join('; ')}; ${duration(run.totalSeconds)} in all.`
  );
}

/**
 * What `npm run test:record` writes to test/results/durations.json (scripts/test.mjs): one full
 * `npm test` and one `npm run test:quick` on this checkout, timed from the outside, with jest's own
 * duration of every file of the full run (its --json report: each file's start and end).
 */
export interface TestDurations {
  /** When the full run began (ISO 8601, UTC). */
  date: string;
  /** The commit it ran on (HEAD of the checkout; `+` when the tree had changes). */
  commit: string;
  /** The Node the tests ran on, and the machine's cores. */
  node: string;
  cores: number;
  /** The 1-minute load average when the full run began: figures taken beside other work are inflated. */
  loadAverage: number;
  /** `npm test`: the type check and jest, wall time of each and in all; jest's counts. */
  npmTest: { seconds: number; typecheckSeconds: number; jestSeconds: number; tests: number; files: number };
  /** `npm run test:quick`: wall time and jest's counts. */
  quick: { seconds: number; tests: number; files: number };
  /** Every file of the full run, slowest first, with its count of tests. */
  files: { file: string; seconds: number; tests: number }[];
}

/** What the suite is held to on a 2-core machine with nothing else running (issue 50). */
export const TEST_TARGETS = { npmTestSeconds: 300, quickSeconds: 60, fileSeconds: 30 } as const;

/**
 * docs/testing.md's figures of the suite's own speed: both runs' times against their targets and
 * the ten slowest files. While no run is recorded, a line says how to record one.
 */
export function renderTestDurations(d: TestDurations | null): string {
  if (!d) return 'No run is recorded yet: `npm run test:record` writes `test/results/durations.json` and renders this block from it.';
  const s = (seconds: number) => `${seconds.toFixed(0)} s`;
  const slowest = d.files.slice(0, 10);
  const over = d.files.filter((f) => f.seconds > TEST_TARGETS.fileSeconds).length;
  return [
    `Recorded by \`npm run test:record\` (\`test/results/durations.json\`: ${d.date.slice(0, 10)}, commit ${d.commit.slice(0, 10)}, Node ${d.node}, ${d.cores} cores, load average ${d.loadAverage.toFixed(2)} at the start):`,
    '',
    '| run | wall time | target | tests | files |',
    '|---|---:|---:|---:|---:|',
    `| \`npm test\` | ${s(d.npmTest.seconds)} (type check ${s(d.npmTest.typecheckSeconds)}, jest ${s(d.npmTest.jestSeconds)}) | at most ${TEST_TARGETS.npmTestSeconds} s | ${d.npmTest.tests} | ${d.npmTest.files} |`,
    `| \`npm run test:quick\` | ${s(d.quick.seconds)} | at most ${TEST_TARGETS.quickSeconds} s | ${d.quick.tests} | ${d.quick.files} |`,
    '',
    `The ten slowest files of the full run (jest's figure for each; ${over === 0 ? `none of the ${d.files.length} over` : `${over} of the ${d.files.length} over`} the ${TEST_TARGETS.fileSeconds} s a file may take):`,
    '',
    '| file | seconds | tests |',
    '|---|---:|---:|',
    ...slowest.map((f) => `| \`${f.file}\` | ${f.seconds.toFixed(1)} | ${f.tests} |`),
  ].join('\n');
}
