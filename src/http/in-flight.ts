import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Counts handlers that are still running. The HTTP server's close() only waits for connections:
 * a handler whose client hung up keeps running (a bcrypt compare, a transaction), and shutdown
 * must not close the ORM under it. main.ts waits for `idle()` after the server has closed.
 */
export class InFlight {
  private count = 0;
  private waiters: (() => void)[] = [];

  /** Wraps a handler (REST route, the GraphQL middleware) so its whole run is counted. */
  track(handler: RequestHandler): RequestHandler {
    return async (req: Request, res: Response, next: NextFunction) => {
      this.count++;
      try {
        await handler(req, res, next);
      } finally {
        if (--this.count === 0) this.waiters.splice(0).forEach((w) => w());
      }
    };
  }

  /** Resolves when no tracked handler runs. */
  idle(): Promise<void> {
    return this.count === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}
