import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSchema, isEnumType, isObjectType, type GraphQLField } from 'graphql';

/**
 * CONTRACT 13 against schema/schema.graphql (which test/schema.test.ts keeps equal to the built
 * schema): operation names, arguments, their types and nullability, and the object types.
 */
const schema = buildSchema(readFileSync(join(__dirname, '..', 'schema', 'schema.graphql'), 'utf8'));

const signature = (f: GraphQLField<unknown, unknown>) =>
  `${f.name}(${[...f.args].sort((a, b) => a.name.localeCompare(b.name)).map((a) => `${a.name}: ${a.type}`).join(', ')}): ${f.type}`;
const signatures = (typeName: string) => Object.values((schema.getType(typeName) as any).getFields()).map((f) => signature(f as GraphQLField<unknown, unknown>)).sort();
const fields = (typeName: string) => {
  const t = schema.getType(typeName);
  if (!isObjectType(t)) throw new Error(`${typeName} is not an object type`);
  return Object.fromEntries(Object.values(t.getFields()).map((f) => [f.name, String(f.type)]));
};

it('queries: names, arguments and types', () => {
  expect(signatures('Query')).toEqual(
    [
      'me(): User',
      'posts(author: Int, page: Int, published: Boolean): PostPage!',
      'postsSimple(author: Int, page: Int, published: Boolean): PostSimplePage!',
      'postsCursor(author: Int, cursor: String, direction: Direction, published: Boolean): PostCursorPage!',
      'post(id: Int!): Post',
      'trash(page: Int): PostPage!',
      'trashSimple(page: Int): PostSimplePage!',
      'trashCursor(cursor: String, direction: Direction): PostCursorPage!',
      'adminUsers(page: Int): UserPage!',
      'adminUsersSimple(page: Int): UserSimplePage!',
      'adminUsersCursor(cursor: String, direction: Direction): UserCursorPage!',
      'tenantPosts(): [TenantPost!]!',
      'allTenantPosts(): [TenantPost!]!',
    ].sort(),
  );
});

it('mutations: names, arguments and types', () => {
  expect(signatures('Mutation')).toEqual(
    [
      'register(email: String!, name: String!, password: String!): AuthPayload!',
      'login(email: String!, password: String!): AuthPayload!',
      'forgotPassword(email: String!): Message!',
      'resetPassword(password: String!, token: String!): Message!',
      'verifyEmail(token: String!): Message!',
      'resendVerification(): Message!',
      'createPost(body: String!, idempotencyKey: String, title: String!): Post!',
      'publishPost(id: Int!, ifMatch: String): Post!',
      'deletePost(id: Int!, ifMatch: String): Message!',
      'restorePost(id: Int!, ifMatch: String): Post!',
      'addComment(body: String!, idempotencyKey: String, postId: Int!): Comment!',
      'restoreFromTrash(id: Int!): Post!',
      'deleteFromTrash(id: Int!): Message!',
      'purgeTrash(): PurgeResult!',
      'deleteUser(id: Int!, ifMatch: String): Message!',
      'restoreUser(id: Int!): User!',
      'createTenantPost(body: String!, idempotencyKey: String, title: String!): TenantPost!',
      // Edits and conditional writes: `ifMatch` on every write to an existing post, comment or user.
      'updatePost(body: String, id: Int!, ifMatch: String, title: String): Post!',
      'updateComment(body: String!, id: Int!, ifMatch: String): Comment!',
      'deleteComment(id: Int!, ifMatch: String): Message!',
      'updateMe(ifMatch: String, name: String!): User!',
      'changePassword(currentPassword: String!, ifMatch: String, password: String!): AuthPayload!',
    ].sort(),
  );
});

it('object types: section 4 in camelCase, timestamps DateTimeISO, authors {id, name} and nullable', () => {
  const T = 'DateTimeISO!';
  expect(fields('AuthPayload')).toEqual({ token: 'String!', user: 'User!' });
  expect(fields('Message')).toEqual({ message: 'String!' });
  expect(fields('PurgeResult')).toEqual({ message: 'String!', count: 'Int!' });
  expect(fields('User')).toEqual({ id: 'Int!', name: 'String!', email: 'String!', role: 'String!', emailVerifiedAt: 'DateTimeISO', createdAt: T, updatedAt: T, posts: '[Post!]!', etag: 'String!' });
  expect(fields('Author')).toEqual({ id: 'Int!', name: 'String!' });
  expect(fields('Post')).toEqual({
    id: 'Int!', userId: 'Int!', title: 'String!', slug: 'String!', body: 'String!', published: 'Boolean!', publishedAt: 'DateTimeISO',
    createdAt: T, updatedAt: T, deletedAt: 'DateTimeISO', user: 'Author', comments: '[Comment!]!', commentsCount: 'Int!', etag: 'String!',
  });
  expect(fields('Comment')).toEqual({ id: 'Int!', postId: 'Int!', userId: 'Int!', body: 'String!', createdAt: T, updatedAt: T, user: 'Author', etag: 'String!' });
  expect(fields('TenantPost')).toEqual({ id: 'Int!', tenantId: 'Int!', title: 'String!', body: 'String!', createdAt: T, updatedAt: T });
  const direction = schema.getType('Direction');
  expect(isEnumType(direction) && direction.getValues().map((v) => v.name)).toEqual(['ASC', 'DESC']);
});

it.each([
  ['Post', 'PostPage', 'PostSimplePage', 'PostCursorPage'],
  ['User', 'UserPage', 'UserSimplePage', 'UserCursorPage'],
])('%s page types: SPEC 2.7 fields; from, to, nextPage and the cursors nullable', (item, page, simple, cursor) => {
  expect(fields(page)).toEqual({ data: `[${item}!]!`, total: 'Int!', perPage: 'Int!', currentPage: 'Int!', lastPage: 'Int!', from: 'Int', to: 'Int', nextPage: 'Int' });
  expect(fields(simple)).toEqual({ data: `[${item}!]!`, hasMore: 'Boolean!' });
  expect(fields(cursor)).toEqual({ data: `[${item}!]!`, nextCursor: 'String', prevCursor: 'String', hasNextPage: 'Boolean!', hasPrevPage: 'Boolean!', perPage: 'Int!', path: 'String!' });
});

it('no object type (operations aside) has a password or token-version field', () => {
  const leaks: string[] = [];
  for (const t of Object.values(schema.getTypeMap())) {
    if (!isObjectType(t) || t.name.startsWith('__') || t.name === 'Query' || t.name === 'Mutation') continue;
    for (const name of Object.keys(t.getFields())) if (/password|tokenversion/i.test(name)) leaks.push(`${t.name}.${name}`);
  }
  expect(leaks).toEqual([]);
});
