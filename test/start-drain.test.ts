import { connect, type Socket } from 'node:net';
import type { TestApp } from './support/harness';
import { builtServerStarts } from './support/built-start';
import { connect as connectWs, untilSubscribedAt } from './support/ws';
import { readByPeer } from './support/sockets';
import { settled, until } from './support/wait';

/**
 * How the real process (as `npm start` runs it, test/start.test.ts) drains on SIGTERM: an
 * in-flight request completes while /readyz says 503, a handler whose client hung up finishes
 * before the ORM closes, a request still open after SHUTDOWN_TIMEOUT_MS is cut, and open
 * subscriptions complete with their sockets closed 1001; each time the exit is 0.
 */
const built = builtServerStarts();

/** A raw HTTP/1.1 exchange whose request is written in parts, so it can be held open across a signal. */
function rawExchange(port: number): { socket: Socket; send: (chunk: string) => void; response: Promise<{ status: number; body: string }> } {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (c) => (received += c));
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    socket.on('error', reject);
    socket.on('close', () => {
      const m = /^HTTP\/1\.1 (\d{3})/.exec(received);
      if (!m) return reject(new Error(`no HTTP response: ${JSON.stringify(received)}`));
      resolve({ status: Number(m[1]), body: received.slice(received.indexOf('\r\n\r\n') + 4) });
    });
  });
  return { socket, send: (chunk) => socket.write(chunk), response };
}

const waitFor = (what: () => boolean, label: string) => until(what, label, { ms: 10_000, everyMs: 50 });

it('SIGTERM drains: an in-flight request completes with 200, /readyz answers 503 meanwhile, then exit 0', async () => {
  const server = built.start();
  await server.ready;
  const port = server.port();
  const email = `drain-${process.pid}@example.test`;
  const reg = await fetch(`http://127.0.0.1:${port}/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Drain', email, password: 'password123' }),
  });
  expect(reg.status).toBe(201);

  // In flight: a login whose body is half sent. Beside it, a /readyz request begun (headers not
  // finished) on its own connection, so the server counts it as active rather than idle.
  const body = JSON.stringify({ email, password: 'password123' });
  const login = rawExchange(port);
  login.send(`POST /auth/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body.slice(0, 10)}`);
  const ready = rawExchange(port);
  ready.send('GET /readyz HTTP/1.1\r\nHost: localhost\r\n');
  // Both in the server's hands: it has read every byte sent on each connection.
  await until(() => readByPeer(login.socket) && readByPeer(ready.socket), 'the server to read both requests begun');

  server.child.kill('SIGTERM');
  await waitFor(() => server.output().includes('shutting down: draining requests'), 'the drain to start');

  ready.send('Connection: close\r\n\r\n');
  const readyAnswer = await ready.response;
  expect([readyAnswer.status, JSON.parse(readyAnswer.body)]).toEqual([503, { message: 'Service unavailable' }]);
  expect(server.child.exitCode).toBeNull();

  login.send(body.slice(10));
  const loginAnswer = await login.response;
  expect(loginAnswer.status).toBe(200);
  expect(JSON.parse(loginAnswer.body)).toMatchObject({ user: { email }, token: expect.any(String) });

  expect(await server.exited).toBe(0);
  expect(server.output()).toContain('"msg":"stopped"');
  expect(built.postgresRunning()).toBe(false);
}, 90_000);

it('SIGTERM waits for a handler whose client hung up: the ORM closes only after it finished its work', async () => {
  // Cost 14: a compare of about a second, so the handler is surely mid-bcrypt when the signal lands.
  const server = built.start({ BCRYPT_COST: '14' });
  await server.ready;
  const port = server.port();
  const email = `orphan-${process.pid}@example.test`;
  const post = (path: string, body: object) =>
    fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect((await post('/auth/register', { name: 'Orphan', email, password: 'password123' })).status).toBe(201);
  expect((await post('/auth/login', { email, password: 'wrong-password' })).status).toBe(401);
  const db = built.clusterClient();
  await db.connect();
  const attempts = async () => Number((await db.query(`select count(*) from rate_attempts where key like $1`, [`%${email}%`])).rows[0].count);
  expect(await attempts()).toBe(1);

  // A right password: its attempt row is written before bcrypt, and after bcrypt the success
  // deletes the pair's rows. The client hangs up while bcrypt runs.
  const login = rawExchange(port);
  const body = JSON.stringify({ email, password: 'password123' });
  login.response.catch(() => undefined);
  login.send(`POST /auth/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  await until(async () => (await attempts()) >= 2, "the login's attempt row", { ms: 10_000, everyMs: 10 }).catch(() => undefined);
  expect(await attempts()).toBe(2);
  await db.end();
  server.child.kill('SIGTERM');
  login.socket.destroy();

  expect(await server.exited).toBe(0);
  expect(server.output()).not.toContain('"level":50');
  // The handler finished its work before the ORM closed: the success cleared the pair's attempts.
  const again = built.start();
  await again.ready;
  const check = built.clusterClient();
  await check.connect();
  const { rows } = await check.query(`select count(*) from rate_attempts where key like $1`, [`%${email}%`]);
  await check.end();
  again.child.kill('SIGTERM');
  expect(await again.exited).toBe(0);
  expect(Number(rows[0].count)).toBe(0);
}, 90_000);

it('a request still open after SHUTDOWN_TIMEOUT_MS is cut; the process still exits 0', async () => {
  const server = built.start({ SHUTDOWN_TIMEOUT_MS: '300' });
  await server.ready;
  const port = server.port();
  // A body that never finishes: without the cut the drain would wait for it for ever.
  const stuck = rawExchange(port);
  stuck.send('POST /auth/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"email":');
  const outcome = stuck.response.then(
    (r) => `answered ${r.status}`,
    (e: Error) => `cut: ${e.message.slice(0, 40)}`,
  );
  await until(() => readByPeer(stuck.socket), 'the server to read the stuck request as far as it was sent');
  server.child.kill('SIGTERM');
  expect(await server.exited).toBe(0);
  expect(await outcome).toMatch(/^cut: /);
  expect(server.output()).toContain('"msg":"stopped"');
}, 90_000);

it('SIGTERM with open subscriptions: each completes, its socket closes with 1001, then exit 0 (CONTRACT 2, 14)', async () => {
  const server = built.start();
  await server.ready;
  const base = `http://127.0.0.1:${server.port()}`;
  const call = async (path: string, body: unknown, token?: string) => {
    const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
    return (await res.json()) as any;
  };
  const { token } = await call('/auth/register', { name: 'Live', email: `live-${Date.now()}@example.test`, password: 'password123' });
  const post = await call('/posts', { title: 'Live', body: 'b' }, token);
  const conn = connectWs({ url: base } as TestApp, { authorization: `Bearer ${token}` });
  const sub = conn.subscribe(`subscription($id: Int!) { commentAdded(postId: $id) { body } }`, { id: post.id });
  // Subscribed once the service counts it (registered and listening): a comment written next comes back.
  await untilSubscribedAt(base, 'commentAdded');
  await call(`/posts/${post.id}/comments`, { body: 'c0' }, token);
  await settled(sub.nth(0), 'the comment to come back');
  server.child.kill('SIGTERM');
  await sub.ended;
  expect(sub.completed).toBe(true);
  expect(await conn.closed).toEqual({ code: 1001, reason: 'Going away' });
  expect(await server.exited).toBe(0);
  expect(server.output()).toContain('"msg":"stopped"');
}, 90_000);
