import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';

/** [tx_queue, rx_queue] of each TCP socket in /proc/net/tcp{,6} from local port `from` to remote port `to`. */
function queues(from: number, to: number): [number, number][] {
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
  const found: [number, number][] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const [, local, remote, , queue] = line.trim().split(/\s+/);
      if (local?.endsWith(`:${hex(from)}`) && remote?.endsWith(`:${hex(to)}`)) {
        const [tx, rx] = queue.split(':').map((n) => parseInt(n, 16));
        found.push([tx, rx]);
      }
    }
  }
  return found;
}

/**
 * Whether the process at the other end of this loopback connection has read every byte written
 * to it so far: nothing waits in our send queue and nothing in its receive queue (Linux's
 * /proc/net/tcp). A server in Node hands what it reads to its HTTP parser at once, so after this
 * the request, as far as it was sent, is in the server's hands: a positive marker that a request
 * is in flight, where the service logs nothing until it ends.
 */
export function readByPeer(socket: Socket): boolean {
  const { localPort, remotePort } = socket;
  if (!localPort || !remotePort || socket.writableLength > 0) return false;
  const ours = queues(localPort, remotePort);
  const theirs = queues(remotePort, localPort);
  return ours.length === 1 && theirs.length === 1 && ours[0][0] === 0 && theirs[0][1] === 0;
}
