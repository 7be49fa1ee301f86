import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';

/**
 * The client address of a request Express does not route (a WebSocket upgrade), computed as
 * Express computes `req.ip` for `trust proxy` set to a hop count (TRUST_PROXY): with proxy-addr,
 * Express's own dependency, trusting the nearest `hops` addresses. test/trust-proxy.test.ts holds
 * the two readings together.
 */
export function clientIpReader(hops: number): (req: IncomingMessage) => string {
  const trust = (_addr: string, i: number) => i < hops;
  return (req) => (req.socket.remoteAddress === undefined ? 'unknown' : proxyaddr(req, trust));
}
