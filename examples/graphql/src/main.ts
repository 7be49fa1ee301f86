import { createGraphQLClient, GraphQLError, type DocumentMode } from './client.js';
import { AddCommentDocument, CommentAddedDocument, CreatePostDocument, PostsDocument, PublishPostDocument, RegisterDocument } from './documents.js';
import type { CommentAddedSubscription } from './gql/graphql.js';

/**
 * The GraphQL example: registers, writes a post (retried once with its idempotency key: still one
 * post), publishes it if nobody changed it meanwhile (ifMatch with the etag the create answered),
 * follows its comments over a subscription (graphql-ws) and comments on it, every step typed by
 * the generated documents.
 *
 *   API_URL=http://localhost:3000 npm run graphql                       # ids, or the text if the service has no manifest
 *   API_URL=http://localhost:3000 GRAPHQL_SEND=documentId npm run graphql # document ids only
 *   API_URL=http://localhost:3000 GRAPHQL_SEND=query npm run graphql      # the documents' text only
 *
 * By default (`auto`) it sends document ids and, when the service does not know them
 * (PERSISTED_QUERY_NOT_FOUND: a plain `npm start` loads no manifest), the documents' text from
 * then on. For ids only, start the service with
 * GRAPHQL_DOCUMENTS=examples/graphql/src/gql/persisted-documents.json (and, in production,
 * GRAPHQL_TRUSTED_DOCUMENTS=only). Its last line is a JSON summary (`send`: what it settled on),
 * which test/examples.test.ts reads.
 */
const api = process.env.API_URL ?? 'http://localhost:3000';
const send = (process.env.GRAPHQL_SEND || 'auto') as DocumentMode | 'auto';
if (send !== 'documentId' && send !== 'query' && send !== 'auto') throw new Error(`GRAPHQL_SEND is auto, documentId or query, not ${send}`);

const client = createGraphQLClient({ url: `${api}/graphql`, send });

type Comment = CommentAddedSubscription['commentAdded'];

/** `promise`'s value if it settles within `ms`, else undefined (the timer does not outlive it). */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** The steps above, in order; any failure ends the example with the service's message. */
async function main(): Promise<void> {
  const stamp = Date.now().toString(36);
  const { register } = await client.execute(RegisterDocument, {
    name: 'GraphQL Example',
    email: `graphql-example-${stamp}@example.com`,
    password: 'a long enough passphrase',
  });
  client.setToken(register.token);
  console.log(`registered ${register.user.name} (user ${register.user.id}, role ${register.user.role})`);

  // A create that may be retried (a timeout, a dropped connection) carries a key of its own: the
  // repeat returns the post the first one created instead of writing a second.
  const create = { title: `Typed from GraphQL ${stamp}`, body: 'Written with a generated, typed document.', idempotencyKey: `create-post-${stamp}` };
  const { createPost: post } = await client.execute(CreatePostDocument, create);
  const { createPost: retried } = await client.execute(CreatePostDocument, create);
  if (retried.id !== post.id) throw new Error(`the retried create wrote post ${retried.id} besides ${post.id}`);
  // Publish only the version this client saw: a change by anyone else meanwhile is PRECONDITION_FAILED, not overwritten.
  const { publishPost } = await client.execute(PublishPostDocument, { id: post.id, ifMatch: post.etag });
  console.log(`created post ${post.id} "${post.title}" (${post.slug}; retried with its key: the same post), published at ${publishPost.publishedAt} (if still ${post.etag})`);

  // Follow the post's comments. graphql-transport-ws acknowledges the connection but not a
  // subscribe, so a comment written too soon may come before the service listens for the post:
  // comment (a moment after the connection's ack) until one comes back over the subscription.
  const comments = client.subscribe(CommentAddedDocument, { postId: post.id });
  const firstEvent: Promise<Comment> = comments.next().then((step) => {
    if (step.done) throw new Error('the subscription ended before any comment');
    return step.value.commentAdded;
  });
  await client.connected();
  await within(firstEvent, 200);
  const written: number[] = [];
  let comment: Comment | undefined;
  for (let attempt = 1; !comment && attempt <= 10; attempt++) {
    const { addComment } = await client.execute(AddCommentDocument, { postId: post.id, body: `Comment ${attempt} from the GraphQL example` });
    written.push(addComment.id);
    comment = await within(firstEvent, 1000);
  }
  await comments.return?.();
  if (!comment) throw new Error(`no comment came back over the subscription (wrote ${written.join(', ')})`);
  if (!written.includes(comment.id)) throw new Error(`the subscription delivered comment ${comment.id}, not one of ours (${written.join(', ')})`);
  console.log(`subscription: comment ${comment.id} on post ${comment.postId} by ${comment.user?.name ?? '(deleted user)'}: "${comment.body}"`);

  const { posts } = await client.execute(PostsDocument, { page: 1 });
  const listed = posts.data.find((p) => p.id === post.id);
  console.log(`posts page ${posts.currentPage} of ${posts.lastPage}, ${posts.total} in all; ours has ${listed?.commentsCount ?? 0} comment(s)`);

  await client.close();
  console.log(
    JSON.stringify({
      send: client.mode(),
      user: { id: register.user.id, name: register.user.name },
      post: { id: post.id, slug: post.slug, published: publishPost.published, retriedId: retried.id, etagChanged: publishPost.etag !== post.etag },
      commentsWritten: written,
      received: { id: comment.id, postId: comment.postId, body: comment.body, author: comment.user?.name ?? null },
      listed: listed ? { id: listed.id, commentsCount: listed.commentsCount } : null,
    }),
  );
}

main().catch(async (err: unknown) => {
  await client.close();
  const codes = err instanceof GraphQLError ? err.errors.map((e) => e.extensions?.code) : [];
  console.error(`graphql example failed: ${err instanceof Error ? err.message : String(err)}`);
  if (send === 'documentId' && (codes.includes('PERSISTED_QUERY_NOT_FOUND') || /non-empty `query`/.test(String(err)))) {
    console.error('the service does not know these document ids: start it with GRAPHQL_DOCUMENTS=examples/graphql/src/gql/persisted-documents.json, or run with GRAPHQL_SEND=query');
  }
  process.exitCode = 1;
});
