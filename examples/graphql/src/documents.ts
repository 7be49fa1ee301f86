import { graphql } from './gql/index.js';

/**
 * Every operation this client sends. GraphQL Code Generator reads these `graphql(...)` calls and
 * writes their types (./gql) and the trusted documents manifest (./gql/persisted-documents.json).
 * Add an operation here, then run `npm run codegen`.
 */

export const RegisterDocument = graphql(`
  mutation Register($name: String!, $email: String!, $password: String!) {
    register(name: $name, email: $email, password: $password) {
      token
      user { id name email role }
    }
  }
`);

export const CreatePostDocument = graphql(`
  mutation CreatePost($title: String!, $body: String!, $idempotencyKey: String) {
    createPost(title: $title, body: $body, idempotencyKey: $idempotencyKey) { id title slug published etag }
  }
`);

export const PublishPostDocument = graphql(`
  mutation PublishPost($id: Int!, $ifMatch: String) {
    publishPost(id: $id, ifMatch: $ifMatch) { id published publishedAt etag }
  }
`);

export const AddCommentDocument = graphql(`
  mutation AddComment($postId: Int!, $body: String!) {
    addComment(postId: $postId, body: $body) { id body createdAt user { id name } }
  }
`);

export const PostsDocument = graphql(`
  query Posts($page: Int) {
    posts(page: $page) {
      total
      currentPage
      lastPage
      data { id title commentsCount user { name } }
    }
  }
`);

export const CommentAddedDocument = graphql(`
  subscription CommentAdded($postId: Int!) {
    commentAdded(postId: $postId) { id postId body createdAt user { id name } }
  }
`);
