// npm test [-- <jest arguments>]: the type check (npm run typecheck's tsc), then jest.
// npm run test:quick [-- <jest arguments>]: jest alone, without the files that start processes of
//   their own (scripts/test-files.cjs): the inner loop's run. The type check is left to the editor.
// npm run test:record: `npm test`, then `npm run test:quick`, each timed, written with jest's
//   per-file durations to test/results/durations.json, and docs/testing.md's block rendered from it.
//
// Each step runs in a process group of its own. A SIGINT (Ctrl-C), SIGTERM or SIGHUP reaching
// this process (npm forwards them to it) goes to the whole group of the step in progress: tsc
// stops; jest's workers and the servers the tests started stop, and jest's main process stops
// whatever else the run started and removes its temporary folder (test/support/run-cleanup.ts)
// before it exits. Once a step has exited, anything still in its group is killed, and this
// process ends by the same signal, so npm reports the interruption.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exactly, processFiles } from './test-files.cjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [mode, ...jestArgs] = ['--quick', '--record'].includes(process.argv[2]) ? process.argv.slice(2) : ['--full', ...process.argv.slice(2)];
// Incremental (as `npm run typecheck`): what tsc learnt of the unchanged files is kept in
// node_modules/.cache, so a run after a small change, or a second run, checks in a second or two
// instead of rereading the whole program (test/interrupt.test.ts runs `npm test` inside `npm test`).
const tsBuildInfo = join(root, 'node_modules', '.cache', 'blog-api', 'typecheck.tsbuildinfo');
const typecheck = [join(root, 'node_modules', 'typescript-native', 'bin', 'tsc'), '-p', 'tsconfig.json', '--noEmit', '--incremental', '--tsBuildInfoFile', tsBuildInfo];
const jest = (...args) => ['--experimental-vm-modules', '--disable-warning=ExperimentalWarning', join(root, 'node_modules', 'jest', 'bin', 'jest.js'), ...args];

// Node's module compile cache for every process of the run (tsc, jest and its workers, and the
// servers, scripts, npm and tools the tests start, which inherit it): a service process compiles
// the same dependencies dozens of times a run, and from the cache it starts with about a sixth
// less CPU (measured here: 1.5 -> 1.3 s to load the app). Kept beside tsc's build info.
const env = { ...process.env, NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? join(root, 'node_modules', '.cache', 'blog-api', 'node-compile-cache') };

let child;
let interrupted;
const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
for (const signal of signals) {
  process.on(signal, () => {
    interrupted ??= signal;
    if (child) try { process.kill(-child.pid, signal); } catch { /* the group is gone */ }
  });
}

/** Runs the steps one after the other, each in a group of its own; stops at the first that fails. Returns the exit code and each step's wall seconds. */
async function runSteps(steps) {
  let code = 0;
  const seconds = [];
  for (const args of steps) {
    if (interrupted) break;
    const started = process.hrtime.bigint();
    child = spawn(process.execPath, args, { cwd: root, env, stdio: 'inherit', detached: true });
    const [exitCode, signal] = await new Promise((resolve) => child.once('exit', (c, s) => resolve([c, s])));
    seconds.push(Number(process.hrtime.bigint() - started) / 1e9);
    try { process.kill(-child.pid, 'SIGKILL'); } catch { /* nothing left in the group */ }
    child = undefined;
    code = exitCode ?? 1;
    if (signal && !interrupted) code = 1;
    if (code !== 0) break;
  }
  return { code, seconds };
}

/**
 * The quick run: every file but those that start processes, so jest's own arguments (a pattern)
 * narrow it further. The ignore pattern goes last: jest's array options take the words after them.
 */
const quick = (...args) => jest(...args, `--testPathIgnorePatterns=${exactly(processFiles(root))}`);

/**
 * test:record: both runs, timed, and jest's --json report of each; the results file and the
 * docs/testing.md block rendered from it (scripts/doc-blocks.ts renderTestDurations).
 */
async function record() {
  const reports = mkdtempSync(join(tmpdir(), 'blog-api-test-record-'));
  try {
    const date = new Date().toISOString();
    const loadAverage = loadavg()[0];
    // The type check as a fresh clone (and CI) runs it: from nothing, not from the last run's build info.
    rmSync(tsBuildInfo, { force: true });
    const full = await runSteps([typecheck, jest('--json', `--outputFile=${join(reports, 'full.json')}`)]);
    if (full.code !== 0) return full.code;
    const fast = await runSteps([quick('--json', `--outputFile=${join(reports, 'quick.json')}`)]);
    if (fast.code !== 0) return fast.code;
    const report = (name) => JSON.parse(readFileSync(join(reports, name), 'utf8'));
    const [fullReport, quickReport] = [report('full.json'), report('quick.json')];
    const git = (...args) => spawnSync('git', args, { cwd: root, encoding: 'utf8' }).stdout.trim();
    const results = {
      date,
      commit: git('rev-parse', 'HEAD') + (git('status', '--porcelain', '--untracked-files=no') ? '+' : ''),
      node: process.version,
      cores: availableParallelism(),
      loadAverage: Math.round(loadAverage * 100) / 100,
      npmTest: {
        seconds: round(full.seconds[0] + full.seconds[1]),
        typecheckSeconds: round(full.seconds[0]),
        jestSeconds: round(full.seconds[1]),
        tests: fullReport.numTotalTests,
        files: fullReport.numTotalTestSuites,
      },
      quick: { seconds: round(fast.seconds[0]), tests: quickReport.numTotalTests, files: quickReport.numTotalTestSuites },
      files: fullReport.testResults
        .map((r) => ({ file: relative(root, r.name), seconds: round((r.endTime - r.startTime) / 1000), tests: r.assertionResults.length }))
        .sort((a, b) => b.seconds - a.seconds || a.file.localeCompare(b.file)),
    };
    mkdirSync(join(root, 'test', 'results'), { recursive: true });
    writeFileSync(join(root, 'test', 'results', 'durations.json'), `${JSON.stringify(results, null, 2)}\n`);
    console.log(`test:record: wrote test/results/durations.json (npm test ${results.npmTest.seconds} s, test:quick ${results.quick.seconds} s)`);
    return (await runSteps([[join(root, 'scripts', 'build.mjs')], [join(root, 'dist', 'scripts', 'render-docs.js'), 'tests']])).code;
  } finally {
    rmSync(reports, { recursive: true, force: true });
  }
}

const round = (seconds) => Math.round(seconds * 10) / 10;

let code;
if (mode === '--record') code = await record();
else code = (await runSteps(mode === '--quick' ? [quick(...jestArgs)] : [typecheck, jest(...jestArgs)])).code;
if (interrupted) {
  for (const signal of signals) process.removeAllListeners(signal);
  process.kill(process.pid, interrupted);
}
process.exitCode = code;
