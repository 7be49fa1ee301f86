// npm run test:repeat -- <files...> <n> [jest options]
//
// Runs the chosen test files n times in a row, one jest run after another, on a loaded machine:
// while they run, a busy loop (node) keeps one core busy, pinned to the last core with taskset when
// there is one. Prints each run's result (the failing files and tests when it fails) and a summary
// per file; exits 1 if any run failed. Options starting with `-` go to jest, written --name=value (default
// --maxWorkers=1: the files of a run one after another, beside the load). Each run's full jest
// output is kept in a log file, named in the summary of a failed run.
//
// SIGINT or SIGTERM stops the jest run in progress (its process group, which cleans up after
// itself: test/support/global-setup.ts) and the load, then exits.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const jestOptions = args.filter((a) => a.startsWith('-'));
const positional = args.filter((a) => !a.startsWith('-'));
const n = Number(positional.at(-1));
const files = positional.slice(0, -1).map((f) => relative(root, resolve(root, f)));
if (!Number.isInteger(n) || n < 1 || files.length === 0) {
  console.error('usage: npm run test:repeat -- <test files...> <runs> [jest options]');
  process.exit(2);
}
for (const f of files) if (!existsSync(join(root, f))) {
  console.error(`test:repeat: no such file: ${f}`);
  process.exit(2);
}
if (!jestOptions.some((o) => o.startsWith('--maxWorkers') || o === '-i' || o === '--runInBand')) jestOptions.push('--maxWorkers=1');

/** The load: a node busy loop, pinned to the last core (taskset) when the machine has more than one. */
function startLoad() {
  const cores = availableParallelism();
  const busy = [process.execPath, '-e', 'for (;;) {}'];
  const pinned = cores > 1 && spawnSync('taskset', ['--version']).status === 0;
  const [command, ...rest] = pinned ? ['taskset', '-c', String(cores - 1), ...busy] : busy;
  const child = spawn(command, rest, { stdio: 'ignore', detached: true });
  return { child, describe: pinned ? `a busy loop pinned to core ${cores - 1} (taskset)` : 'a busy loop (no taskset: not pinned)' };
}

const logs = mkdtempSync(join(tmpdir(), 'blog-api-test-repeat-'));
let current;
let stopping = false;
const failedRuns = [];
/** The logs are kept only when a run failed. */
const exit = (code) => {
  if (failedRuns.length === 0) rmSync(logs, { recursive: true, force: true });
  process.exit(code);
};
const load = startLoad();
const stopLoad = () => { try { process.kill(-load.child.pid, 'SIGKILL'); } catch { /* gone */ } };
process.on('exit', stopLoad);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.log(`\ntest:repeat: ${signal}: stopping the run in progress and the load`);
    stopLoad();
    if (!current) exit(130);
    try { process.kill(-current.pid, signal); } catch { /* gone */ }
    current.once('exit', () => exit(130));
  });
}

/** One jest run of the files, in a process group of its own; its JSON report says which tests failed. */
function runOnce(i) {
  const report = join(logs, `run-${i}.json`);
  const log = join(logs, `run-${i}.log`);
  const fd = openSync(log, 'w');
  const started = Date.now();
  current = spawn(process.execPath, ['--experimental-vm-modules', '--disable-warning=ExperimentalWarning', join(root, 'node_modules', 'jest', 'bin', 'jest.js'),
    ...files, ...jestOptions, '--json', `--outputFile=${report}`], { cwd: root, stdio: ['ignore', fd, fd], detached: true });
  return new Promise((resolve) => current.once('exit', (code, signal) => {
    closeSync(fd);
    // Whatever the run left in its group (it should be nothing) goes with it.
    try { process.kill(-current.pid, 'SIGKILL'); } catch { /* gone */ }
    current = undefined;
    let failed = [];
    try {
      const json = JSON.parse(readFileSync(report, 'utf8'));
      failed = json.testResults.filter((r) => r.status === 'failed').map((r) => ({
        file: relative(root, r.name),
        tests: r.assertionResults.filter((a) => a.status === 'failed').map((a) => a.fullName),
        message: r.assertionResults.length ? '' : r.message.split('\n').slice(0, 5).join('\n'),
      }));
    } catch { /* no report: the run itself failed */ }
    const ok = code === 0 && failed.length === 0;
    if (code !== 0 && failed.length === 0) failed = files.map((file) => ({ file, tests: [], message: `jest exited with ${signal ?? code}` }));
    resolve({ ok, failed, seconds: (Date.now() - started) / 1000, log });
  }));
}

console.log(`test:repeat: ${files.join(' ')}, ${n} runs, jest ${jestOptions.join(' ')}; load: ${load.describe}`);
const failures = new Map(files.map((f) => [f, 0]));
let ran = 0;
for (let i = 1; i <= n && !stopping; i++) {
  const r = await runOnce(i);
  if (stopping) break;
  ran = i;
  if (r.ok) {
    console.log(`run ${i}/${n}: pass (${r.seconds.toFixed(0)} s)`);
    rmSync(r.log, { force: true });
  } else {
    failedRuns.push(i);
    console.log(`run ${i}/${n}: FAIL (${r.seconds.toFixed(0)} s), log: ${r.log}`);
    for (const f of r.failed) {
      failures.set(f.file, (failures.get(f.file) ?? 0) + 1);
      console.log(`  ${f.file}${f.tests.length ? '' : `: ${f.message}`}`);
      for (const t of f.tests) console.log(`    ✕ ${t}`);
    }
  }
  rmSync(join(logs, `run-${i}.json`), { force: true });
}
stopLoad();
console.log(`\ntest:repeat summary: ${ran - failedRuns.length} of ${ran} runs passed${failedRuns.length ? ` (failed: ${failedRuns.join(', ')})` : ''}`);
for (const [file, count] of failures) console.log(`  ${file}: ${ran - count}/${ran} passed`);
exit(failedRuns.length ? 1 : 0);
