import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { renderBenchSummary, renderResults, type BenchResults } from '../bench/results-render';
import { renderMemory, type MemoryResults } from '../bench/memory-render';
import { BLOCKS, blocksOf, outsideBlocks, renderBlocks, renderCiRun, renderSuite, renderTestDurations, testFiles, type BlockName, type TestDurations } from '../scripts/doc-blocks';

/**
 * The README is the front door and docs/ the reference; these checks keep both true as the code
 * moves: every setting the config reads is documented, no relative link or anchor dangles, every
 * figure comes from its source through a rendered block (below), and what the docs say about the
 * code's readers of process.env is what a scan of src/ finds.
 */
const root = join(__dirname, '..');
const read = (path: string) => readFileSync(path, 'utf8');

const docsDir = join(root, 'docs');
const pages = [
  join(root, 'README.md'),
  ...readdirSync(docsDir)
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(docsDir, f)),
];

/** Lines outside ``` fences: headings and links inside code blocks are not markdown. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** GitHub's heading ids: lower-case, punctuation dropped, spaces to '-', repeats suffixed -1, -2. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const ids = new Set<string>();
  for (const line of prose(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    ids.add(n === 0 ? base : `${base}-${n}`);
  }
  return ids;
}

function links(text: string): string[] {
  const out: string[] = [];
  for (const line of prose(text)) {
    const noCode = line.replace(/`[^`]*`/g, '');
    for (const m of noCode.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push(m[1]);
  }
  return out;
}

describe('README.md and docs/*.md', () => {
  it('finds the pages it checks', () => {
    const names = pages.map((p) => relative(root, p));
    expect(names).toEqual(expect.arrayContaining(['README.md', 'docs/settings.md', 'docs/api.md', 'docs/operations.md']));
  });

  it('every relative link points to an existing file, and every #anchor to a heading there', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages) {
      for (const target of links(read(page))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
        checked++;
        const [path, anchor] = target.split('#', 2);
        const file = path === '' ? page : resolve(dirname(page), decodeURIComponent(path));
        const where = `${relative(root, page)} → ${target}`;
        if (!existsSync(file)) {
          broken.push(`${where}: no such file`);
          continue;
        }
        if (anchor === undefined || anchor === '') continue;
        if (statSync(file).isDirectory() || !file.endsWith('.md')) {
          broken.push(`${where}: anchor on a file without headings`);
          continue;
        }
        if (!anchors(read(file)).has(decodeURIComponent(anchor))) broken.push(`${where}: no such heading`);
      }
    }
    expect(broken).toEqual([]);
    // The README alone links every docs page; fewer links than that means the parser missed them.
    expect(checked).toBeGreaterThanOrEqual(pages.length);
  });

  it('docs/settings.md documents every setting src/config reads', () => {
    const configDir = join(root, 'src', 'config');
    const source = readdirSync(configDir)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => read(join(configDir, f)))
      .join('\n');
    const names = new Set<string>();
    for (const m of source.matchAll(/^\s+([A-Z][A-Z0-9_]{2,}):/gm)) names.add(m[1]);
    for (const m of source.matchAll(/\benv\.([A-Z][A-Z0-9_]{2,})\b/g)) names.add(m[1]);
    // The schema has 18 settings today; far fewer means the parsing above no longer sees them.
    expect(names.size).toBeGreaterThanOrEqual(18);

    const table = new Set(
      [...read(join(docsDir, 'settings.md')).matchAll(/^\|\s*`([A-Z][A-Z0-9_]+)`\s*\|/gm)].map((m) => m[1]),
    );
    expect([...names].filter((n) => !table.has(n)).sort()).toEqual([]);
  });
});

/**
 * Every figure the docs state has one source: the bench's in bench/results/latest.json, the
 * suite's size in the test tree, CI's durations in .ci/last-run.json, the suite's own speed in
 * test/results/durations.json. The pages show them only in
 * rendered blocks (scripts/doc-blocks.ts), so these checks fail when a block is not what its
 * source renders (run `npm run docs:render`), and when such a figure is written by hand outside a
 * block.
 */
describe('figures in README.md and docs/*.md', () => {
  const render = (name: BlockName) => BLOCKS[name](root);

  it('every rendered block is what its source renders now (else: npm run docs:render)', () => {
    const stale: string[] = [];
    for (const page of pages) {
      const text = read(page);
      for (const name of Object.keys(BLOCKS) as BlockName[]) {
        if (renderBlocks(text, render, [name]) !== text) stale.push(`${relative(root, page)}: its ${name} block`);
      }
    }
    expect(stale).toEqual([]);
  });

  it('bench/results/latest.md is what latest.json renders (npm run bench writes both)', () => {
    const results = JSON.parse(read(join(root, 'bench', 'results', 'latest.json'))) as BenchResults;
    expect(read(join(root, 'bench', 'results', 'latest.md'))).toBe(renderResults(results));
  });

  it('the README shows the bench, the suite and CI from their blocks, docs/performance.md the bench runs and the memory breakdown', () => {
    const names = (page: string) => new Set(blocksOf(read(join(root, page))).map((b) => b.name));
    expect([...names('README.md')].sort()).toEqual(['bench', 'ci', 'suite']);
    expect([...names('docs/performance.md')].sort()).toEqual(['bench', 'bench-node26', 'bench-rate', 'memory']);
  });

  it('docs/testing.md shows the suite\'s own durations from test/results/durations.json (npm run test:record), the ten slowest files named', () => {
    const testing = read(join(docsDir, 'testing.md'));
    expect(blocksOf(testing).map((b) => b.name)).toContain('tests');
    const file = join(root, 'test', 'results', 'durations.json');
    expect(existsSync(file)).toBe(true);
    const recorded = JSON.parse(read(file)) as TestDurations;
    const rendered = renderTestDurations(recorded);
    for (const f of recorded.files.slice(0, 10)) expect(rendered).toContain(`| \`${f.file}\` |`);
    // A changed figure changes the page: the staleness check above fails until docs:render (or test:record) has run.
    const slower = { ...recorded, npmTest: { ...recorded.npmTest, seconds: recorded.npmTest.seconds + 1 } };
    expect(renderBlocks(testing, (name) => (name === 'tests' ? renderTestDurations(slower) : render(name)))).not.toBe(testing);
  });

  it('docs/performance.md stays reference: its own text under 320 lines, each rendered block under 40', () => {
    // It carries four rendered blocks (the Node 24 run, the Node 26 run, the fixed-rate run, the
    // memory breakdown): the prose is held on its own, and a full run's block (every target judged)
    // is some thirty lines.
    const page = read(join(docsDir, 'performance.md'));
    expect(outsideBlocks(page).split('\n').length).toBeLessThan(320);
    expect(blocksOf(page).filter((b) => b.text.split('\n').length >= 40).map((b) => b.name)).toEqual([]);
  });

  it('a changed source changes the rendered page (the check above can fail)', () => {
    const readme = read(join(root, 'README.md'));
    const results = JSON.parse(read(join(root, 'bench', 'results', 'latest.json'))) as BenchResults;
    const service = results.scenarios[0].targets.find((t) => t.name === 'service')!;
    service.reqPerSec = (service.reqPerSec ?? 0) + 1000;
    const other = (name: BlockName) => (name === 'bench' ? renderBenchSummary(results) : render(name));
    expect(renderBlocks(readme, other)).not.toBe(readme);
    const moreFiles = (name: BlockName) => (name === 'suite' ? renderSuite([...testFiles(root), 'test/extra.test.ts']) : render(name));
    expect(renderBlocks(readme, moreFiles)).not.toBe(readme);
    const ran = (name: BlockName) =>
      name === 'ci' ? renderCiRun({ date: '2026-01-01T00:00:00Z', commit: 'f'.repeat(40), lines: [{ label: '26', node: 'v26.0.0', seconds: 61, result: 'PASSED' }], totalSeconds: 61 }) : render(name);
    expect(renderBlocks(readme, ran)).not.toBe(readme);
  });

  it('a changed memory.json, Node 26 run or fixed-rate run changes docs/performance.md (the check above can fail)', () => {
    const page = read(join(docsDir, 'performance.md'));
    const memory = JSON.parse(read(join(root, 'bench', 'results', 'memory.json'))) as MemoryResults;
    memory.peak.youngMb += 10;
    expect(renderBlocks(page, (name) => (name === 'memory' ? renderMemory(memory) : render(name)))).not.toBe(page);
    // A run recorded where the block says there is none, or another one than the block shows.
    const run = JSON.parse(read(join(root, 'bench', 'results', 'latest.json'))) as BenchResults;
    run.run.date = '2030-01-01T00:00:00Z';
    for (const block of ['bench-node26', 'bench-rate'] as const) {
      expect(renderBlocks(page, (name) => (name === block ? renderBenchSummary(run) : render(name)))).not.toBe(page);
    }
  });

  /**
   * A measured figure in prose: throughput, a ratio, a CPU cost per request, an RSS, the suite's
   * size, a duration of CI or of the suite. A ratio or a size after ≥, ≤, <, > (or "at least",
   * "at most") is a target, not a figure.
   */
  const FIGURES: { what: string; re: RegExp }[] = [
    // Or a table with a req/s column.
    { what: 'throughput', re: /\d[\d,.]*\s*(?:req\/s|requests? (?:a|per) second|pages (?:a|per) second|logins?\/s)|^\|.*\breq\/s\b.*\|\s*$/gi },
    // Not a product of counts ("10 × 401", "20 × N" connections): a ratio is followed by no number.
    { what: 'ratio', re: /(?<!(?:[≥≤<>]=?|at (?:least|most))\s*)(?<![\w.])\d+(?:\.\d+)?\s?[x×](?![\w/])(?!\s*\d)/g },
    { what: 'CPU per request', re: /\d+(?:\.\d+)?\s*(?:ms|µs) (?:of (?:Node|PostgreSQL)[^.,;]*CPU|(?:of )?CPU|per request|a request|per answer)|ms\/req/gi },
    // A size is a whole number: "≤ 200 MB" is a target even though "00 MB" follows "≤ 2".
    { what: 'RSS', re: /(?<!(?:[≥≤<>]=?|under|below|at most)\s*)(?<![\d,.])\d[\d,.]*\s*MB\b[^.;]{0,40}\bRSS|\bRSS\b[^.;]{0,40}?(?<!(?:[≥≤<>]=?|under|below|at most)\s*)(?<![\d,.])\d[\d,.]*\s*MB\b/g },
    { what: 'suite size', re: /\b\d[\d,]*\s+(?:tests|test files|files)\b/gi },
    { what: 'CI or suite duration', re: /\b\d+\s*min\s+\d+\s*s\b|(?:\.ci\/run|\bCI\b|npm test|the suite)[^.]{0,80}?\b\d+(?:\.\d+)?\s*(?:min|minutes|s|seconds|h|hours)\b|\b\d+(?:\.\d+)?\s*(?:min|minutes)\b[^.]{0,40}(?:\.ci\/run|\bCI\b|npm test|the suite)/g },
  ];

  /** What looks like a figure but is not one (a setting's default, a protocol's number), with why. */
  const NOT_FIGURES: { page: string; text: string; why: string }[] = [
    { page: 'docs/dependencies.md', text: "OpenTelemetry SDK's 0.30x line", why: 'a version line (0.300, 0.301, ...)' },
    { page: 'docs/deploy.md', text: '0.9 × interval', why: "the job claim's SQL" },
    { page: 'docs/operations.md', text: 'allow 20 × N', why: 'connections: the pool size times the workers' },
  ];

  /** The figures of `text`, line by line, but those NOT_FIGURES names for `page`. */
  function figuresIn(page: string, text: string): string[] {
    const found: string[] = [];
    text.split('\n').forEach((line, i) => {
      if (NOT_FIGURES.some((n) => n.page === page && line.includes(n.text))) return;
      for (const { what, re } of FIGURES) for (const m of line.matchAll(re)) found.push(`${page}:${i + 1}: ${what} "${m[0]}"`);
    });
    return found;
  }

  it('no figure of the bench, the suite or CI is written by hand outside a block', () => {
    // Blocks out; inline code stays (a figure in backticks is still a figure).
    expect(pages.flatMap((page) => figuresIn(relative(root, page), outsideBlocks(read(page))))).toEqual([]);
  });

  it('finds the hand-written figures the README used to carry (the check above can fail)', () => {
    const old = [
      'On this 2-core machine the suite (55 files, about 760 tests) takes about 4 minutes, `npm ci`',
      'included (`bash .ci/run` on a fresh clone: 4 min 1 s). What the',
      '| answer | req/s | service / Express ref | service / raw |',
      '| REST `GET /posts/:id` | 1,880 | **0.72×** (FAIL: ≥ 0.9×) | 0.54× |',
      'receiver, it costs about **0.11–0.13 ms of Node CPU per request** (2 spans: the route\'s SERVER',
      '(`GET /posts/:id` 0.12 → 0.23 ms, 0.60× the req/s), peak RSS 246 MB',
    ].join('\n');
    const kinds = figuresIn('README.md', old).map((f) => f.split(': ')[1].replace(/ ".*/, ''));
    expect(new Set(kinds)).toEqual(new Set(FIGURES.map((f) => f.what)));
    // A threshold is not a figure.
    expect(figuresIn('README.md', 'GET /posts/:id ≥ 0.9× the Express reference, at most 1.15× the time, peak RSS ≤ 200 MB')).toEqual([]);
  });
});

/** Statements the docs make about the code, held to the code. */
describe('what the docs say about the code', () => {
  /** Every file of src/ whose code (not its comments or strings) names process.env. */
  function envReaders(): string[] {
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir).sort()) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (name.endsWith('.ts')) {
          const code = read(path)
            .replace(/\/\*[\s\S]*?\*\//g, '')
            .replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
          if (/(?<![\w'"`])(?<![^.]\.)process\.env\b/.test(code)) found.push(relative(root, path));
        }
      }
    };
    walk(join(root, 'src'));
    return found.sort();
  }

  it('docs/settings.md names exactly the files of src/ that read process.env', () => {
    const settings = read(join(docsDir, 'settings.md'));
    const intro = settings.slice(0, settings.indexOf('\n| variable'));
    const named = [...new Set([...intro.matchAll(/`(src\/[\w./-]+\.ts)`/g)].map((m) => m[1]))].sort();
    const readers = envReaders();
    expect(readers).toContain('src/config/config.ts');
    expect(named).toEqual(readers);
  });

  it('no page says config.ts is the only reader of process.env', () => {
    const claims = pages.filter((p) => /only\s+reader\s+of\s+`process\.env`|nothing\s+else\s+in\s+`src\/`\s+reads\s+`process\.env`/.test(read(p)));
    expect(claims.map((p) => relative(root, p))).toEqual([]);
  });
});
