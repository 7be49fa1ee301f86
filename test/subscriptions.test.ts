import jwt from 'jsonwebtoken';
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { buildPost, POST_FIELDS, sql } from './support/blog';
import { asTenant, freshTenant, TENANT_POST_FIELDS } from './support/tenants';
import { connect, untilSubscribed, untilUnsubscribed, type WsConnection } from './support/ws';
import { emit, flushAndEmit } from '../src/db/events';
import { Comment } from '../src/modules/comment/comment.entity';
import { Post } from '../src/modules/post/post.entity';
import { User } from '../src/modules/user/user.entity';

/** CONTRACT 14: GraphQL subscriptions over graphql-transport-ws, through a real client and socket. */

let app: TestApp;
let api: ReturnType<typeof clients>;
let author: Awaited<ReturnType<typeof buildUser>>;
const open: WsConnection[] = [];

beforeAll(async () => {
  app = await startTestApp();
  api = clients(app.url);
  author = await buildUser(app, { name: 'Ada' });
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.dispose()));
  // The server sees the closes a moment later; the next test counts its own subscribers from zero.
  await untilUnsubscribed(app);
});
afterAll(() => app.close());

function ws(params: Record<string, unknown> = {}): WsConnection {
  const c = connect(app, params);
  open.push(c);
  return c;
}

const COMMENT_FIELDS = 'id postId userId body createdAt updatedAt user { id name }';
const COMMENT_ADDED = `subscription($postId: Int!) { commentAdded(postId: $postId) { ${COMMENT_FIELDS} } }`;
const POST_PUBLISHED = `subscription { postPublished { ${POST_FIELDS} } }`;
const TENANT_CREATED = `subscription { tenantPostCreated { ${TENANT_POST_FIELDS} } }`;

const addComment = async (postId: number, body: string, token = author.token) => {
  const r = await api.rest('POST', `/posts/${postId}/comments`, { token, body: { body } });
  expect(r.status).toBe(201);
  return r.body as { id: number };
};

describe('commentAdded(postId)', () => {
  it('delivers each new comment of that post as the post query shows it, once, in commit order; nothing of other posts', async () => {
    const post = await buildPost(app, author.user);
    const other = await buildPost(app, author.user);
    const conn = ws();
    const sub = conn.subscribe(COMMENT_ADDED, { postId: post.id });
    await untilSubscribed(app, 1);

    await addComment(other.id, 'elsewhere');
    const first = await addComment(post.id, 'first');
    const second = await addComment(post.id, 'second');
    const [a, b] = [await sub.nth(0), await sub.nth(1)];

    const query = await api.gql(`query($id: Int!) { post(id: $id) { comments { ${COMMENT_FIELDS} } } }`, { id: post.id });
    const [qa, qb] = query.data.post.comments;
    expect(a).toEqual({ data: { commentAdded: qa } });
    expect(b).toEqual({ data: { commentAdded: qb } });
    expect([qa.id, qb.id]).toEqual([first.id, second.id]);
    expect(qa.user).toEqual({ id: author.user.id, name: 'Ada' });

    // At most once: the next delivery is the next write, not a repeat.
    const third = await addComment(post.id, 'third');
    expect((await sub.nth(2)).data?.commentAdded.id).toBe(third.id);
    expect(sub.results).toHaveLength(3);
  });

  it('NOT_FOUND `Post not found` at subscribe for a missing or trashed post, then completes', async () => {
    const trashed = await buildPost(app, author.user, { deletedAt: new Date() });
    const conn = ws();
    for (const postId of [999999, trashed.id]) {
      const sub = conn.subscribe(COMMENT_ADDED, { postId });
      await sub.ended;
      expect(sub.results).toEqual([{ errors: [expect.objectContaining({ message: 'Post not found', extensions: { code: 'NOT_FOUND' }, path: ['commentAdded'] })] }]);
    }
    expect(app.built.subscriptions.hub.size).toBe(0);
  });

  it.each([
    ['trashed (DELETE /posts/:id)', async (id: number, mod: string) => expect((await api.rest('DELETE', `/posts/${id}`, { token: mod })).status).toBe(200)],
    ['deleted for good (DELETE /trash/:id)', async (id: number, mod: string) => {
      await api.rest('DELETE', `/posts/${id}`, { token: mod });
      expect((await api.rest('DELETE', `/trash/${id}`, { token: mod })).status).toBe(200);
    }],
    ['purged (DELETE /trash)', async (id: number, mod: string) => {
      await api.rest('DELETE', `/posts/${id}`, { token: mod });
      expect((await api.rest('DELETE', '/trash', { token: mod })).status).toBe(200);
    }],
    ['purged by retention', async (id: number) => {
      await sql(app, `update posts set deleted_at = now() - interval '40 days' where id = ?`, [id]);
      await app.built.services.trashRetention.runNow();
    }],
  ])('completes when its post is %s; the comment committed before is delivered first', async (_label, gone) => {
    const mod = (await buildUser(app, { role: 'moderator' })).token;
    const post = await buildPost(app, author.user);
    const sub = ws().subscribe(COMMENT_ADDED, { postId: post.id });
    await untilSubscribed(app, 1);
    const last = await addComment(post.id, 'last words');
    await gone(post.id, mod);
    await sub.ended;
    expect(sub.completed).toBe(true);
    expect(sub.results.map((r) => r.data?.commentAdded.id)).toEqual([last.id]);
  });
});

describe('batched delivery', () => {
  it('one event costs the same statements for 40 subscribers of a post as for one', async () => {
    const post = await buildPost(app, author.user);
    const statementsFor = async (subscribers: number) => {
      const conn = ws();
      const subs = Array.from({ length: subscribers }, () => conn.subscribe(COMMENT_ADDED, { postId: post.id }));
      await untilSubscribed(app, subscribers);
      app.sql.length = 0;
      await addComment(post.id, `for ${subscribers}`);
      await Promise.all(subs.map((s) => s.nth(0)));
      const count = app.sql.length;
      expect(subs.every((s) => s.results[0].data?.commentAdded.user.name === 'Ada')).toBe(true);
      await conn.dispose();
      await untilUnsubscribed(app);
      return count;
    };
    const one = await statementsFor(1);
    expect(await statementsFor(40)).toBe(one);
  });
});

describe('postPublished', () => {
  it('delivers a post published through REST or the mutation, as post(id) answers it; never an unpublished one', async () => {
    const viaRest = await buildPost(app, author.user);
    const viaGql = await buildPost(app, author.user);
    const sub = ws().subscribe(POST_PUBLISHED);
    await untilSubscribed(app, 1);

    await api.rest('POST', '/posts', { token: author.token, body: { title: 'Never published', body: 'x' } });
    expect((await api.rest('PATCH', `/posts/${viaRest.id}/publish`, { token: author.token })).status).toBe(200);
    const m = await api.gql(`mutation($id: Int!) { publishPost(id: $id) { id } }`, { id: viaGql.id }, { token: author.token });
    expect(m.errors).toBeUndefined();
    // Publishing again changes nothing, so it emits nothing.
    await api.rest('PATCH', `/posts/${viaRest.id}/publish`, { token: author.token });
    const marker = await buildPost(app, author.user);
    await api.rest('PATCH', `/posts/${marker.id}/publish`, { token: author.token });

    await sub.nth(2);
    const expected = [];
    for (const id of [viaRest.id, viaGql.id, marker.id]) expected.push({ data: { postPublished: (await api.gql(`query($id: Int!) { post(id: $id) { ${POST_FIELDS} } }`, { id })).data.post } });
    expect(sub.results).toEqual(expected);
    expect(sub.results[0].data.postPublished.user).toEqual({ id: author.user.id, name: 'Ada' });
    expect(JSON.stringify(sub.results)).not.toContain('email');
  });

  it('a soft-deleted author arrives as user: null, as in the query', async () => {
    const gone = await buildUser(app);
    const mod = await buildUser(app, { role: 'moderator' });
    const post = await buildPost(app, gone.user);
    await sql(app, 'update users set deleted_at = now() where id = ?', [gone.user.id]);
    const sub = ws().subscribe(POST_PUBLISHED);
    await untilSubscribed(app, 1);
    expect((await api.rest('PATCH', `/posts/${post.id}/publish`, { token: mod.token })).status).toBe(200);
    const got = (await sub.nth(0)).data!.postPublished;
    const q = (await api.gql(`query($id: Int!) { post(id: $id) { ${POST_FIELDS} } }`, { id: post.id })).data.post;
    expect([got.user, got]).toEqual([null, q]);
  });
});

describe('tenantPostCreated', () => {
  it("UNAUTHENTICATED `Unknown tenant` without a tenant (or a malformed one) in connectionParams", async () => {
    for (const params of [{}, { tenantId: 'abc' }, { tenantId: 0 }]) {
      const sub = ws(params).subscribe(TENANT_CREATED);
      await sub.ended;
      expect(sub.results).toEqual([{ errors: [expect.objectContaining({ message: 'Unknown tenant', extensions: { code: 'UNAUTHENTICATED' } })] }]);
    }
  });

  it("delivers only the connection's tenant's posts, as the tenantPosts query shows them", async () => {
    const mine = freshTenant();
    const theirs = freshTenant();
    const sub = ws({ tenantId: mine }).subscribe(TENANT_CREATED);
    const asString = ws({ tenantId: String(theirs) }).subscribe(TENANT_CREATED);
    await untilSubscribed(app, 2);

    const foreign = await api.rest('POST', '/tenant/posts', { headers: asTenant(theirs), body: { title: 'theirs', body: 'b' } });
    const own = await api.rest('POST', '/tenant/posts', { headers: asTenant(mine), body: { title: 'mine', body: 'b' } });
    const own2 = await api.gql(`mutation { createTenantPost(title: "mine 2", body: "b") { id } }`, {}, { headers: asTenant(mine) });
    expect([foreign.status, own.status, own2.errors]).toEqual([201, 201, undefined]);

    await sub.nth(1);
    const listed = (await api.gql(`{ tenantPosts { ${TENANT_POST_FIELDS} } }`, {}, { headers: asTenant(mine) })).data.tenantPosts;
    expect(sub.results).toEqual(listed.map((p: unknown) => ({ data: { tenantPostCreated: p } })));
    expect((await asString.nth(0)).data.tenantPostCreated).toMatchObject({ id: foreign.body.id, tenantId: theirs });
    const marker = await api.rest('POST', '/tenant/posts', { headers: asTenant(theirs), body: { title: 'theirs 2', body: 'b' } });
    expect((await asString.nth(1)).data.tenantPostCreated.id).toBe(marker.body.id);
    expect(asString.results).toHaveLength(2);
  });
});

describe('events only after commit', () => {
  it('a rolled-back write emits nothing (a failed flush, and an emit in a transaction that then fails)', async () => {
    const post = await buildPost(app, author.user);
    const sub = ws().subscribe(COMMENT_ADDED, { postId: post.id });
    await untilSubscribed(app, 1);

    // The services' helper: the flush fails (no such user: foreign key), so its event is never sent.
    const em = app.orm.em.fork();
    em.create(Comment, { post: em.getReference(Post, post.id), user: em.getReference(User, 2_000_000_000), body: 'orphan' } as Comment);
    await expect(flushAndEmit(em, () => [{ type: 'commentAdded', postId: post.id, commentId: 1 }])).rejects.toThrow(/foreign key/);
    // An event queued in a transaction that then rolls back.
    const real = await addComment(post.id, 'real, but its second event rolls back');
    await expect(
      app.orm.em.fork().transactional(async (tx) => {
        await emit(tx, [{ type: 'commentAdded', postId: post.id, commentId: real.id }]);
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    const marker = await addComment(post.id, 'marker');

    await sub.nth(1);
    expect(sub.results.map((r) => r.data?.commentAdded.id)).toEqual([real.id, marker.id]);
  });
});

describe('authentication at connection_init (checked as on HTTP)', () => {
  const secret = () => app.config.jwtSecret!;

  it('anonymous and valid-token connections are accepted', async () => {
    const anon = ws();
    const authed = ws({ authorization: `Bearer ${author.token}` });
    await Promise.all([anon.connected, authed.connected]);
  });

  it('a bad, expired, verification or revoked token refuses the connection (4401 with the REST message)', async () => {
    const victim = await buildUser(app);
    const tokens = {
      badSignature: jwt.sign({ id: author.user.id, tv: 0 }, 'another-secret-that-is-at-least-32-chars', { algorithm: 'HS256', expiresIn: '1h' }),
      expired: jwt.sign({ id: author.user.id, tv: author.user.tokenVersion, exp: Math.floor(Date.now() / 1000) - 10 }, secret(), { algorithm: 'HS256' }),
      verification: app.built.services.tokens.signVerifyEmail(author.user),
      revoked: victim.token,
    };
    await sql(app, 'update users set token_version = token_version + 1 where id = ?', [victim.user.id]);
    for (const [kind, token] of Object.entries(tokens)) {
      const c = ws({ authorization: `Bearer ${token}` });
      expect([kind, await c.closed]).toEqual([kind, { code: 4401, reason: 'Invalid token' }]);
    }
  });

  it("the connection closes at its token's exp", async () => {
    const token = jwt.sign({ id: author.user.id, tv: author.user.tokenVersion, exp: Math.floor(Date.now() / 1000) + 2 }, secret(), { algorithm: 'HS256' });
    const c = ws({ authorization: `Bearer ${token}` });
    await c.connected;
    expect(await c.closed).toEqual({ code: 4401, reason: 'Token expired' });
  });
});

describe('limits', () => {
  it('at most 50 subscriptions per connection: the 51st gets TOO_MANY_REQUESTS; a freed slot is usable again', async () => {
    const c = ws();
    const subs = Array.from({ length: 50 }, () => c.subscribe(POST_PUBLISHED));
    const extra = c.subscribe(POST_PUBLISHED);
    await expect(extra.ended).rejects.toEqual([expect.objectContaining({ message: 'At most 50 subscriptions per connection', extensions: { code: 'TOO_MANY_REQUESTS' } })]);
    await untilSubscribed(app, 50);
    subs[0].unsubscribe();
    const again = c.subscribe(POST_PUBLISHED);
    await untilSubscribed(app, 50);
    const post = await buildPost(app, author.user);
    await api.rest('PATCH', `/posts/${post.id}/publish`, { token: author.token });
    expect((await again.nth(0)).data.postPublished.id).toBe(post.id);
  });

  it('the cost limit applies as for queries, before anything runs', async () => {
    const sub = ws().subscribe(`subscription { postPublished { comments { ${'id '.repeat(500)} } } }`);
    await expect(sub.ended).rejects.toEqual([expect.objectContaining({ message: 'Query is too complex: estimated cost exceeds the limit of 5000', extensions: { code: 'BAD_USER_INPUT' } })]);
    expect(app.built.subscriptions.hub.size).toBe(0);
  });
});

describe('observability', () => {
  it('/metrics shows open sockets, active subscriptions by field, deliveries and their lag', async () => {
    const post = await buildPost(app, author.user);
    const sub = ws().subscribe(COMMENT_ADDED, { postId: post.id });
    await untilSubscribed(app, 1);
    await addComment(post.id, 'measured');
    await sub.nth(0);
    const text = (await api.rest('GET', '/metrics')).text;
    expect(text).toMatch(/^graphql_ws_open_sockets [1-9]/m);
    expect(text).toMatch(/^graphql_subscriptions_active\{field="commentAdded"\} 1$/m);
    expect(text).toMatch(/^graphql_subscription_events_delivered_total\{field="commentAdded"\} [1-9]/m);
    expect(text).toMatch(/^graphql_subscription_delivery_lag_seconds_count\{field="commentAdded"\} [1-9]/m);
  });
});

describe('over HTTP', () => {
  it('a subscription sent to POST /graphql is refused as a bad request, nothing runs', async () => {
    const r = await api.gql(`subscription { postPublished { id } }`);
    expect(r.status).toBe(200);
    expect(r.data).toBeUndefined();
    expect(r.errors).toEqual([{ message: 'Subscriptions are served over WebSocket (graphql-transport-ws) at /graphql', extensions: { code: 'BAD_USER_INPUT' } }]);
    expect(app.built.subscriptions.hub.size).toBe(0);
  });
});
