/**
 * Counts handlers that are still running. The HTTP server's close() only waits for connections:
 * a handler whose client hung up keeps running (a bcrypt compare, a transaction), and shutdown
 * must not close the ORM under it. main.ts waits for `idle()` after the server has closed.
 */
export class InFlight {
  private count = 0;
  private started = 0;
  private waiters: (() => void)[] = [];

  /** Runs a handler (a REST route, a GraphQL request), counted for its whole run. */
  async run<T>(handler: () => T | Promise<T>): Promise<T> {
    this.count++;
    this.started++;
    try {
      return await handler();
    } finally {
      if (--this.count === 0) this.waiters.splice(0).forEach((w) => w());
    }
  }

  /** Handlers started so far (core/heap.ts releaseWhenIdle tells a busy minute from an idle one). */
  served(): number {
    return this.started;
  }

  /** Handlers running now. */
  running(): number {
    return this.count;
  }

  /** Resolves when no tracked handler runs. */
  idle(): Promise<void> {
    return this.count === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}
