import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import createClient from 'openapi-fetch';
import type { paths } from '../rest/src/api.js';
import { createGraphQLClient } from '../graphql/src/client.js';
import { AddCommentDocument, CommentAddedDocument, CreatePostDocument, PostsDocument, PublishPostDocument, RegisterDocument } from '../graphql/src/documents.js';
import { startTestServer, testRoutes, type TestServer } from './test-server.js';

/**
 * A client team's integration tests, as docs/testing.md describes them: one throwaway server for
 * the file (`npm run test-server`), a reset before each test, the typed REST and GraphQL clients
 * of this package, and a password reset read from the captured mail.
 *
 *   npm run build && npm run test:integration     # in examples/, beside the service's checkout
 */
let server: TestServer;
let routes: ReturnType<typeof testRoutes>;

before(async () => {
  server = await startTestServer();
  routes = testRoutes(server.url);
});
after(() => server?.stop());
// Each test starts from empty tables (ids from 1), no captured mail and no valid token.
beforeEach(() => routes.reset());

const rest = (token?: string) => createClient<paths>({ baseUrl: server.url, headers: token ? { authorization: `Bearer ${token}` } : {} });

describe('REST', () => {
  it('registers, writes and publishes a post; ids start at 1 after the reset', async () => {
    const registered = await rest().POST('/auth/register', { body: { name: 'Ada', email: 'ada@example.com', password: 'a long enough passphrase' } });
    assert.equal(registered.response.status, 201);
    assert.equal(registered.data!.user.id, 1);
    const api = rest(registered.data!.token);
    const created = await api.POST('/posts', { body: { title: 'First', body: 'Hello' } });
    assert.equal(created.data!.id, 1);
    const published = await api.PATCH('/posts/{id}/publish', { params: { path: { id: 1 } } });
    assert.equal(published.data!.published, true);
    const listed = await rest().GET('/posts', { params: { query: { page: 1 } } });
    assert.deepEqual(listed.data && 'total' in listed.data ? { total: listed.data.total, titles: listed.data.data.map((p) => p.title) } : null, { total: 1, titles: ['First'] });
  });

  it('sees nothing of the previous test', async () => {
    const listed = await rest().GET('/posts', { params: { query: { page: 1 } } });
    assert.equal(listed.data && 'total' in listed.data ? listed.data.total : -1, 0);
  });

  it('the demo fixture: the data of npm run seed, its admin can log in', async () => {
    await routes.reset('demo');
    const login = await rest().POST('/auth/login', { body: { email: 'admin@example.com', password: 'demo-password' } });
    assert.equal(login.data!.user.role, 'admin');
  });

  it('a password reset, with the token read from the captured mail', async () => {
    await rest().POST('/auth/register', { body: { name: 'Ada', email: 'ada@example.com', password: 'the first passphrase' } });
    await rest().POST('/auth/forgot-password', { body: { email: 'ada@example.com' } });
    const mails = await routes.mails('ada@example.com');
    // The verification mail of the registration, then the reset.
    assert.deepEqual(mails.map((m) => m.subject.toLowerCase().includes('reset')), [false, true]);
    const token = /#token=([0-9a-f]+)/.exec(mails[1].text)?.[1];
    assert.ok(token, mails[1].text);
    const reset = await rest().POST('/auth/reset-password', { body: { token, password: 'the second passphrase' } });
    assert.equal(reset.response.status, 200);
    const login = await rest().POST('/auth/login', { body: { email: 'ada@example.com', password: 'the second passphrase' } });
    assert.equal(login.response.status, 200);
    await routes.clearMails();
    assert.deepEqual(await routes.mails(), []);
  });
});

describe('GraphQL', () => {
  it('writes over HTTP and hears a comment over a subscription', async () => {
    // `auto`: the test server loads no trusted documents manifest, so the client sends the text.
    const client = createGraphQLClient({ url: `${server.url}/graphql`, send: 'auto' });
    try {
      const { register } = await client.execute(RegisterDocument, { name: 'Grace', email: 'grace@example.com', password: 'a long enough passphrase' });
      assert.equal(register.user.id, 1);
      client.setToken(register.token);
      const { createPost } = await client.execute(CreatePostDocument, { title: 'Live', body: 'Comments welcome' });
      await client.execute(PublishPostDocument, { id: createPost.id });

      // The subscribe race: graphql-transport-ws acknowledges the connection, not the subscribe.
      // So: subscribe, wait for the connection, then comment until the first event arrives.
      const events = client.subscribe(CommentAddedDocument, { postId: createPost.id });
      const first = events.next();
      await client.connected();
      const written: number[] = [];
      let received: Awaited<typeof first> | undefined;
      void first.then((r) => (received = r));
      for (let i = 0; !received && i < 20; i++) {
        const { addComment } = await client.execute(AddCommentDocument, { postId: createPost.id, body: `Comment ${i}` });
        written.push(addComment.id);
        await Promise.race([first, new Promise((r) => setTimeout(r, 100))]);
      }
      const event = await first;
      assert.ok(!event.done && written.includes(event.value.commentAdded.id));
      await events.return?.();

      const { posts } = await client.execute(PostsDocument, { page: 1 });
      assert.deepEqual(posts.data.map((p) => [p.title, p.commentsCount]), [['Live', written.length]]);
    } finally {
      await client.close();
    }
  });
});
