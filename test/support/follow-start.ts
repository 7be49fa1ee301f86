import type { ChildProcess } from 'node:child_process';

export interface FollowedStart {
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** The port from the "listening on" line (PORT=0: the system picked it); 0 before it. */
  port(): number;
  /** Resolves once /readyz answers 200; rejects if the process exits first or `timeoutMs` passes. */
  ready: Promise<void>;
}

/**
 * Follows a server process as it starts: collects its output, reads the bound port from its
 * log, and polls /readyz. Shared by the tests that spawn `node dist/src/main.js` or `npm start`.
 */
export function followStart(child: ChildProcess, timeoutMs = 60_000): FollowedStart {
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const port = () => Number(/"msg":"listening on http:\/\/localhost:(\d+)"/.exec(out)?.[1] ?? 0);
  const ready = (async () => {
    let last = 'not listening yet';
    for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`exited early:\n${out}`);
      if (!port()) continue;
      try {
        const res = await fetch(`http://127.0.0.1:${port()}/readyz`);
        if (res.status === 200) return;
        last = `readyz ${res.status}`;
      } catch (err) {
        last = String((err as Error).cause ?? err);
      }
    }
    throw new Error(`not ready after ${timeoutMs / 1000} s (${last}):\n${out}`);
  })();
  // A test that expects the start to fail never awaits `ready`: its rejection must not land on the next test.
  ready.catch(() => undefined);
  return { output: () => out, port, ready };
}
