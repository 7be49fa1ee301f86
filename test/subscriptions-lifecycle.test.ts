import WebSocket from 'ws';
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { buildPost, sql } from './support/blog';
import { connect, untilSubscribed, untilUnsubscribed, wsUrl, type WsConnection } from './support/ws';
import { settled, until } from './support/wait';
import { createPinoLogger } from '../src/core/logger';

/** CONTRACT 14 and 2: per-IP limit, shutdown, and several instances on one database. */

const COMMENT_ADDED = `subscription($postId: Int!) { commentAdded(postId: $postId) { id postId body user { id name } } }`;

/** A bare upgrade, to see the HTTP answer of a refused one. */
function rawUpgrade(app: TestApp): Promise<{ status: number; body: string } | 'open'> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(wsUrl(app), 'graphql-transport-ws');
    socket.on('open', () => {
      socket.close();
      resolve('open');
    });
    socket.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    socket.on('error', (err) => reject(err));
  });
}

describe('SUBSCRIPTION_CONNECTIONS_PER_IP', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ SUBSCRIPTION_CONNECTIONS_PER_IP: '2' });
  });
  afterAll(() => app.close());

  it('refuses the upgrade past the limit with 429 {message}; a closed connection frees its slot', async () => {
    const a = connect(app);
    const b = connect(app);
    await Promise.all([a.connected, b.connected]);
    expect(await rawUpgrade(app)).toEqual({ status: 429, body: JSON.stringify({ message: 'Too many requests' }) });
    await a.dispose();
    await a.closed;
    // The server sees the close a moment after the client: retry until the slot is free.
    let outcome = await rawUpgrade(app);
    while (outcome !== 'open') outcome = await rawUpgrade(app);
    expect(outcome).toBe('open');
    await b.dispose();
  });

  it('an upgrade to another path is refused with 404', async () => {
    const socket = new WebSocket(`${app.url.replace(/^http/, 'ws')}/elsewhere`, 'graphql-transport-ws');
    const status = await new Promise((resolve) => socket.on('unexpected-response', (_req, res) => resolve(res.statusCode)));
    expect(status).toBe(404);
  });
});

describe('shutdown', () => {
  it('close() completes every subscription, then closes each socket with 1001; later upgrades get 503', async () => {
    const app = await startTestApp();
    try {
      const user = await buildUser(app);
      const post = await buildPost(app, user.user);
      const conns: WsConnection[] = [connect(app), connect(app, { authorization: `Bearer ${user.token}` })];
      const subs = conns.flatMap((c) => [c.subscribe(COMMENT_ADDED, { postId: post.id }), c.subscribe(`subscription { postPublished { id } }`)]);
      await untilSubscribed(app, 4);

      await app.built.subscriptions.close();
      await Promise.all(subs.map((s) => s.ended));
      expect(subs.map((s) => s.completed)).toEqual([true, true, true, true]);
      for (const c of conns) expect(await c.closed).toEqual({ code: 1001, reason: 'Going away' });
      expect(await rawUpgrade(app)).toEqual({ status: 503, body: JSON.stringify({ message: 'Service unavailable' }) });
      expect(app.built.subscriptions.hub.size).toBe(0);
    } finally {
      await app.close();
    }
  });
});

describe('two instances on one database', () => {
  let one: TestApp;
  let two: TestApp;
  beforeAll(async () => {
    one = await startTestApp();
    two = await startTestApp({ DATABASE_URL: one.databaseUrl });
  });
  afterEach(async () => {
    // Each test counts its own subscribers from zero.
    await untilUnsubscribed(one, two);
  });
  afterAll(async () => {
    await two.close();
    await one.close();
  });

  it('a subscriber on one receives exactly once what is written on the other (and its own instance too)', async () => {
    const writer = await buildUser(one, { name: 'Writer' });
    const post = await buildPost(one, writer.user);
    const onOne = connect(one);
    const onTwo = connect(two);
    const subOne = onOne.subscribe(COMMENT_ADDED, { postId: post.id });
    const subTwo = onTwo.subscribe(COMMENT_ADDED, { postId: post.id });
    await Promise.all([untilSubscribed(one, 1), untilSubscribed(two, 1)]);

    const viaTwo = await clients(two.url).rest('POST', `/posts/${post.id}/comments`, { token: writer.token, body: { body: 'written on two' } });
    const viaOne = await clients(one.url).rest('POST', `/posts/${post.id}/comments`, { token: writer.token, body: { body: 'written on one' } });
    expect([viaTwo.status, viaOne.status]).toEqual([201, 201]);

    const expected = [
      { data: { commentAdded: { id: viaTwo.body.id, postId: post.id, body: 'written on two', user: { id: writer.user.id, name: 'Writer' } } } },
      { data: { commentAdded: { id: viaOne.body.id, postId: post.id, body: 'written on one', user: { id: writer.user.id, name: 'Writer' } } } },
    ];
    await Promise.all([subOne.nth(1), subTwo.nth(1)]);
    // Exactly once: a third write arrives next on both, nothing repeated before it.
    const marker = await clients(two.url).rest('POST', `/posts/${post.id}/comments`, { token: writer.token, body: { body: 'marker' } });
    await Promise.all([subOne.nth(2), subTwo.nth(2)]);
    for (const sub of [subOne, subTwo]) {
      expect(sub.results.slice(0, 2)).toEqual(expected);
      expect(sub.results[2].data!.commentAdded.id).toBe(marker.body.id);
      expect(sub.results).toHaveLength(3);
    }
    await Promise.all([onOne.dispose(), onTwo.dispose()]);
  });

  it('a trash on one completes the subscriptions on both', async () => {
    const writer = await buildUser(one);
    const post = await buildPost(one, writer.user);
    const subs = [connect(one), connect(two)].map((c) => c.subscribe(COMMENT_ADDED, { postId: post.id }));
    await Promise.all([untilSubscribed(one, 1), untilSubscribed(two, 1)]);
    expect((await clients(one.url).rest('DELETE', `/posts/${post.id}`, { token: writer.token })).status).toBe(200);
    await Promise.all(subs.map((s) => s.ended));
    expect(subs.map((s) => [s.completed, s.results])).toEqual([[true, []], [true, []]]);
  });
});

describe('request log', () => {
  it('one line per subscribe naming the operation and field; connectionParams (the token) never logged', async () => {
    const lines: string[] = [];
    const app = await startTestApp({}, { log: createPinoLogger({ level: 'info', stream: { write: (s: string) => void lines.push(s) } }) });
    try {
      const user = await buildUser(app);
      const c = connect(app, { authorization: `Bearer ${user.token}`, tenantId: 7 });
      const a = c.subscribe(`subscription Feed { postPublished { id } }`);
      const b = c.subscribe(`subscription { tenantPostCreated { id } }`);
      await untilSubscribed(app, 2);
      const subscribes = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'subscribe');
      expect(subscribes).toEqual([
        expect.objectContaining({ transport: 'ws', operation: 'Feed', type: 'subscription', field: 'postPublished', requestId: expect.any(String) }),
        expect.objectContaining({ transport: 'ws', operation: null, type: 'subscription', field: 'tenantPostCreated', requestId: expect.any(String) }),
      ]);
      expect(lines.join('')).not.toContain(user.token.split('.')[2]);
      a.unsubscribe();
      b.unsubscribe();
      await c.dispose();
    } finally {
      await app.close();
    }
  });
});

describe('the LISTEN connection', () => {
  it('is re-opened when lost; events committed after that are delivered again', async () => {
    const app = await startTestApp();
    try {
      const user = await buildUser(app);
      const post = await buildPost(app, user.user);
      const c = connect(app);
      const sub = c.subscribe(COMMENT_ADDED, { postId: post.id });
      await untilSubscribed(app, 1);
      const listeners = `select pid from pg_stat_activity where datname = current_database() and query = 'listen blog_live_events'`;
      const [before] = await sql(app, listeners);
      expect(before).toBeDefined();
      await sql(app, 'select pg_terminate_backend(?)', [before.pid]);
      // The listener is back once a new session has run its LISTEN (idle after it): a comment written next is delivered.
      await until(async () => (await sql(app, `${listeners} and state = 'idle' and pid <> ?`, [before.pid])).length === 1, 'the listener to reconnect');
      await clients(app.url).rest('POST', `/posts/${post.id}/comments`, { token: user.token, body: { body: 'after loss' } });
      await settled(sub.nth(0), 'the comment written after the reconnect');
      const after = await sql(app, listeners);
      expect(after).toHaveLength(1);
      expect(after[0].pid).not.toBe(before.pid);
      await c.dispose();
    } finally {
      await app.close();
    }
  });
});
