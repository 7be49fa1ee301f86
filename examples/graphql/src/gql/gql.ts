/* eslint-disable */
import * as types from './graphql.js';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  mutation Register($name: String!, $email: String!, $password: String!) {\n    register(name: $name, email: $email, password: $password) {\n      token\n      user { id name email role }\n    }\n  }\n": typeof types.RegisterDocument,
    "\n  mutation CreatePost($title: String!, $body: String!, $idempotencyKey: String) {\n    createPost(title: $title, body: $body, idempotencyKey: $idempotencyKey) { id title slug published etag }\n  }\n": typeof types.CreatePostDocument,
    "\n  mutation PublishPost($id: Int!, $ifMatch: String) {\n    publishPost(id: $id, ifMatch: $ifMatch) { id published publishedAt etag }\n  }\n": typeof types.PublishPostDocument,
    "\n  mutation AddComment($postId: Int!, $body: String!) {\n    addComment(postId: $postId, body: $body) { id body createdAt user { id name } }\n  }\n": typeof types.AddCommentDocument,
    "\n  query Posts($page: Int) {\n    posts(page: $page) {\n      total\n      currentPage\n      lastPage\n      data { id title commentsCount user { name } }\n    }\n  }\n": typeof types.PostsDocument,
    "\n  subscription CommentAdded($postId: Int!) {\n    commentAdded(postId: $postId) { id postId body createdAt user { id name } }\n  }\n": typeof types.CommentAddedDocument,
};
const documents: Documents = {
    "\n  mutation Register($name: String!, $email: String!, $password: String!) {\n    register(name: $name, email: $email, password: $password) {\n      token\n      user { id name email role }\n    }\n  }\n": types.RegisterDocument,
    "\n  mutation CreatePost($title: String!, $body: String!, $idempotencyKey: String) {\n    createPost(title: $title, body: $body, idempotencyKey: $idempotencyKey) { id title slug published etag }\n  }\n": types.CreatePostDocument,
    "\n  mutation PublishPost($id: Int!, $ifMatch: String) {\n    publishPost(id: $id, ifMatch: $ifMatch) { id published publishedAt etag }\n  }\n": types.PublishPostDocument,
    "\n  mutation AddComment($postId: Int!, $body: String!) {\n    addComment(postId: $postId, body: $body) { id body createdAt user { id name } }\n  }\n": types.AddCommentDocument,
    "\n  query Posts($page: Int) {\n    posts(page: $page) {\n      total\n      currentPage\n      lastPage\n      data { id title commentsCount user { name } }\n    }\n  }\n": types.PostsDocument,
    "\n  subscription CommentAdded($postId: Int!) {\n    commentAdded(postId: $postId) { id postId body createdAt user { id name } }\n  }\n": types.CommentAddedDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Register($name: String!, $email: String!, $password: String!) {\n    register(name: $name, email: $email, password: $password) {\n      token\n      user { id name email role }\n    }\n  }\n"): (typeof documents)["\n  mutation Register($name: String!, $email: String!, $password: String!) {\n    register(name: $name, email: $email, password: $password) {\n      token\n      user { id name email role }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreatePost($title: String!, $body: String!, $idempotencyKey: String) {\n    createPost(title: $title, body: $body, idempotencyKey: $idempotencyKey) { id title slug published etag }\n  }\n"): (typeof documents)["\n  mutation CreatePost($title: String!, $body: String!, $idempotencyKey: String) {\n    createPost(title: $title, body: $body, idempotencyKey: $idempotencyKey) { id title slug published etag }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation PublishPost($id: Int!, $ifMatch: String) {\n    publishPost(id: $id, ifMatch: $ifMatch) { id published publishedAt etag }\n  }\n"): (typeof documents)["\n  mutation PublishPost($id: Int!, $ifMatch: String) {\n    publishPost(id: $id, ifMatch: $ifMatch) { id published publishedAt etag }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AddComment($postId: Int!, $body: String!) {\n    addComment(postId: $postId, body: $body) { id body createdAt user { id name } }\n  }\n"): (typeof documents)["\n  mutation AddComment($postId: Int!, $body: String!) {\n    addComment(postId: $postId, body: $body) { id body createdAt user { id name } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Posts($page: Int) {\n    posts(page: $page) {\n      total\n      currentPage\n      lastPage\n      data { id title commentsCount user { name } }\n    }\n  }\n"): (typeof documents)["\n  query Posts($page: Int) {\n    posts(page: $page) {\n      total\n      currentPage\n      lastPage\n      data { id title commentsCount user { name } }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription CommentAdded($postId: Int!) {\n    commentAdded(postId: $postId) { id postId body createdAt user { id name } }\n  }\n"): (typeof documents)["\n  subscription CommentAdded($postId: Int!) {\n    commentAdded(postId: $postId) { id postId body createdAt user { id name } }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;