import { execFile } from 'node:child_process';

/**
 * `code` in a child Node with `args`, run in `cwd`: its stdout and stderr. Asynchronous, so that
 * while it runs (seconds, on a busy machine) the test's worker keeps reading the output of the
 * services it started, and keeps its sockets to them serviced.
 */
export function runNode(args: string[], code: string, cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...args, '-e', code], { encoding: 'utf8', cwd, timeout: 60_000, maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`node failed (${String(err.code ?? err.signal)}): ${stderr}`));
      else resolve(stdout + stderr);
    });
  });
}
