import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * `npm run bench -- --baseline <git ref>`: the code at that ref as one more target. It is checked
 * out in a temporary git worktree under os.tmpdir() (never inside the repository), given its
 * dependencies (a hard-linked copy of this checkout's node_modules when both package-lock.json
 * are byte-identical, else its own `npm ci`), built by its own `npm run build`, and started the
 * way its own `npm start` starts it: its package.json's environment and node flags, from its folder.
 */
export interface Baseline {
  ref: string;
  /** The commit the ref named when the bench started. */
  commit: string;
  /** The worktree (also the cwd of the started service). */
  dir: string;
  /** How its `npm start` starts it. */
  start: StartCommand;
  /** Its dist/src/main.js. */
  main: string;
  /** Removes the worktree and its git registration (idempotent; also run on exit). */
  remove(): void;
}

/** The repository this bench was built from (dist/bench/ → the checkout). */
export const repoRoot = join(__dirname, '..', '..');

/** How `npm start` in `dir`'s package.json starts the service: `[exec] [env K=V ...] node [flags] dist/src/main.js`. */
export interface StartCommand {
  /** The environment it sets (glibc's malloc settings). */
  env: Record<string, string>;
  /** The node flags. */
  flags: string[];
  /** As a command line, for the logs and the results. */
  text: string;
}

export function startCommand(dir: string): StartCommand {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts: { start: string } };
  // `exec ...`: the shell replaces itself with env, and env with node, so signals reach it.
  let words = pkg.scripts.start.trim().replace(/^exec\s+/, '').split(/\s+/);
  const env: Record<string, string> = {};
  if (words[0] === 'env') {
    words = words.slice(1);
    while (/^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? '')) {
      const w = words.shift()!;
      env[w.slice(0, w.indexOf('='))] = w.slice(w.indexOf('=') + 1);
    }
  }
  if (words[0] !== 'node' || words[words.length - 1] !== 'dist/src/main.js') throw new Error(`npm start is not "[env K=V ...] node [flags] dist/src/main.js" in ${dir}: ${pkg.scripts.start}`);
  const flags = words.slice(1, -1);
  return { env, flags, text: [...Object.entries(env).map(([k, v]) => `${k}=${v}`), 'node', ...flags, 'dist/src/main.js'].join(' ') };
}

function git(args: string[], cwd = repoRoot): string {
  const res = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`git ${args.join(' ')}: ${(res.stderr || res.stdout).trim()}`);
  return res.stdout.trim();
}

/** The install or build running in the worktree, if any: stopped before the worktree is removed. */
let running: ChildProcess | undefined;

/** A command in `cwd`, its output passed through to the bench's stderr; asynchronous so Ctrl-C is handled meanwhile. */
function run(cmd: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    // A process group of its own, so stopping it stops what it started (npm's install scripts).
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'], detached: true });
    running = child;
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      running = undefined;
      if (code === 0) resolve();
      else reject(new Error(`${cmd} ${args.join(' ')} in ${cwd}: ${signal ?? `exit code ${code}`}`));
    });
  });
}

export async function prepareBaseline(ref: string, log: (m: string) => void): Promise<Baseline> {
  const commit = git(['rev-parse', '--verify', '--end-of-options', `${ref}^{commit}`]);
  const parent = mkdtempSync(join(tmpdir(), 'blog-bench-baseline-'));
  const dir = join(parent, 'tree');
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    process.removeListener('exit', remove);
    if (running?.pid) {
      try {
        process.kill(-running.pid, 'SIGKILL');
      } catch { /* already gone */ }
    }
    // `worktree remove --force` deletes the folder (untracked files, node_modules, dist included)
    // and its registration; should it fail, the folder goes and git forgets this one entry.
    const res = spawnSync('git', ['worktree', 'remove', '--force', dir], { cwd: repoRoot, encoding: 'utf8' });
    rmSync(parent, { recursive: true, force: true, maxRetries: 5 });
    if (res.status !== 0) spawnSync('git', ['worktree', 'prune'], { cwd: repoRoot });
    log(`baseline: removed the worktree ${dir}`);
  };
  // Whatever ends the bench (an error, process.exit in a signal handler), the worktree goes with it.
  process.on('exit', remove);
  try {
    log(`baseline: ${ref} = ${commit.slice(0, 10)}, worktree in ${dir}`);
    git(['worktree', 'add', '--detach', '--quiet', dir, commit]);
    const lock = (d: string) => (existsSync(join(d, 'package-lock.json')) ? readFileSync(join(d, 'package-lock.json')) : null);
    const mine = lock(repoRoot);
    const theirs = lock(dir);
    if (mine && theirs && mine.equals(theirs) && existsSync(join(repoRoot, 'node_modules'))) {
      log('baseline: same package-lock.json as this checkout: hard-linked copy of its node_modules (cp -al)');
      await run('cp', ['-al', join(repoRoot, 'node_modules'), join(dir, 'node_modules')], dir);
    } else {
      log('baseline: its package-lock.json differs from this checkout\'s: npm ci there');
      await run('npm', ['ci', '--no-audit', '--no-fund'], dir);
    }
    await run('npm', ['run', 'build', '--silent'], dir);
    const main = join(dir, 'dist', 'src', 'main.js');
    if (!existsSync(main)) throw new Error(`baseline: ${ref}'s build wrote no dist/src/main.js`);
    return { ref, commit, dir, start: startCommand(dir), main, remove };
  } catch (err) {
    remove();
    throw err;
  }
}
