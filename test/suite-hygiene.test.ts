import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
// The quick run's rule (scripts/test.mjs): CommonJS, so jest loads it as the script does.
import { processChain, processFiles, testFiles as jestFiles } from '../scripts/test-files.cjs';

/**
 * The suite's own rules, kept true by a test: a test waits for the thing itself, never for a
 * fixed time (docs/testing.md, "How a test waits": the helpers in test/support/wait.ts), and
 * every test runs (no skipped or focused test left in a file). test/support/ is where timers
 * may live: the waiting helpers, and timers that are the behaviour under test.
 */
const root = join(__dirname, '..');
const testDir = __dirname;

const RULES: [string, RegExp][] = [
  ['a fixed sleep (setTimeout)', /(?<!jest\.)\bsetTimeout\s*\(/],
  ['a fixed sleep (sleep/delay)', /(?<![\w.])(?:sleep|delay)\s*\(/],
  ['a skipped test', /\b(?:it|test|describe)\.skip\b|(?<![\w.])x(?:it|test|describe)\s*\(/],
  ['a focused test', /\b(?:it|test|describe)\.only\b|(?<![\w.])f(?:it|describe)\s*\(/],
];

/** Every rule a piece of source breaks, as `line: rule`. */
function violations(source: string): string[] {
  return source.split('\n').flatMap((line, i) => RULES.filter(([, re]) => re.test(line)).map(([rule]) => `${i + 1}: ${rule}`));
}

/** Test files outside test/support/, as paths from the repository's root. */
function testFiles(dir = testDir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return path === join(testDir, 'support') ? [] : testFiles(path);
    return /\.(?:ts|js|mjs|cjs)$/.test(e.name) ? [relative(root, path)] : [];
  });
}

describe('suite hygiene', () => {
  it('the rules catch what they are for, and not what they are not', () => {
    for (const bad of [
      'await new Promise((r) => setTimeout(r, 200));',
      'await new Promise(r => setTimeout(r, 5))',
      'const t = setTimeout(() => child.kill(), 1000);',
      'await sleep(100);',
      'await delay(50)',
      "it.skip('x', () => {})",
      "describe.skip('x', () => {})",
      "(cond ? it : it.skip)('x', () => {})",
      "xit('x', () => {})",
      "xdescribe('x', () => {})",
      "it.only('x', () => {})",
      "describe.only('x', () => {})",
      "fit('x', () => {})",
    ])
      expect([bad, violations(bad).length]).toEqual([bad, 1]);
    for (const good of ["jest.setTimeout(60_000);", "await c.query('SELECT pg_sleep(5)')", "await until(() => done, 'the thing')", "it('skips the run while another instance holds the lock', () => {})", 'const exit = fit.length;'])
      expect([good, violations(good)]).toEqual([good, []]);
  });

  it('no test file outside test/support/ sleeps, skips or focuses', () => {
    // This file names what it looks for (its rules and their samples): the first test checks it.
    const found = testFiles()
      .filter((file) => file !== relative(root, __filename))
      .flatMap((file) => violations(readFileSync(join(root, file), 'utf8')).map((v) => `${file}:${v}`));
    // Wait for the thing itself with test/support/wait.ts (until, event, settled); see docs/testing.md.
    expect(found).toEqual([]);
  });

  it('npm run test:quick leaves out exactly the files that start processes (child_process or a browser, directly or through a module they import)', () => {
    const root = join(__dirname, '..');
    const left = processFiles(root);
    // Through test/support: npm start in a copy, the built service's instances, a browser.
    for (const file of ['test/supervisor.test.ts', 'test/instances.test.ts', 'test/graphiql.browser.test.ts', 'test/interrupt.test.ts']) expect(left).toContain(file);
    // Through test/support and src/: a streaming pair of PostgreSQL servers (src/db/embedded.ts).
    expect(processChain(join(root, 'test', 'replicas.test.ts'))).toEqual([join(root, 'test', 'replicas.test.ts'), join(root, 'test', 'support', 'replica.ts'), join(root, 'src', 'db', 'embedded.ts'), 'node:child_process']);
    // The in-process app over the run's PostgreSQL is what the quick run is for.
    for (const file of ['test/posts.test.ts', 'test/fuzz.test.ts', 'test/suite-hygiene.test.ts']) expect(left).not.toContain(file);
    const all = jestFiles(root);
    expect(all.length).toBeGreaterThan(left.length);
    expect(all).toEqual(expect.arrayContaining(left));
  });
});
