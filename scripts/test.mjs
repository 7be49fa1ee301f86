// npm test [-- <jest arguments>]: the type check (npm run typecheck's tsc), then jest.
//
// Each step runs in a process group of its own. A SIGINT (Ctrl-C), SIGTERM or SIGHUP reaching
// this process (npm forwards them to it) goes to the whole group of the step in progress: tsc
// stops; jest's workers and the servers the tests started stop, and jest's main process stops
// whatever else the run started and removes its temporary folder (test/support/run-cleanup.ts)
// before it exits. Once a step has exited, anything still in its group is killed, and this
// process ends by the same signal, so npm reports the interruption.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const steps = [
  [join(root, 'node_modules', 'typescript-native', 'bin', 'tsc'), '-p', 'tsconfig.json', '--noEmit'],
  ['--experimental-vm-modules', '--disable-warning=ExperimentalWarning', join(root, 'node_modules', 'jest', 'bin', 'jest.js'), ...process.argv.slice(2)],
];

let child;
let interrupted;
const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
for (const signal of signals) {
  process.on(signal, () => {
    interrupted ??= signal;
    if (child) try { process.kill(-child.pid, signal); } catch { /* the group is gone */ }
  });
}

let code = 0;
for (const args of steps) {
  if (interrupted) break;
  child = spawn(process.execPath, args, { cwd: root, stdio: 'inherit', detached: true });
  const [exitCode, signal] = await new Promise((resolve) => child.once('exit', (c, s) => resolve([c, s])));
  try { process.kill(-child.pid, 'SIGKILL'); } catch { /* nothing left in the group */ }
  child = undefined;
  code = exitCode ?? 1;
  if (signal && !interrupted) code = 1;
  if (code !== 0) break;
}
if (interrupted) {
  for (const signal of signals) process.removeAllListeners(signal);
  process.kill(process.pid, interrupted);
}
process.exitCode = code;
