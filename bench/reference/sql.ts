/**
 * The raw reference's writes and login (bench/reference/raw.ts): each is ONE statement that
 * returns the finished JSON as text, so Node only splices strings. Its reads are in raw-sql.ts.
 * The JSON is compact and in the service's key order, as JSON.stringify writes the service's
 * answers (src/db/json-sql.ts's generators, the keys of raw-sql.ts).
 */
import { jsonObjectSql } from '../../src/db/json-sql';
import { commentJson, userJson } from './raw-sql';

/** $1 = email (already trimmed and lower-cased). */
export const loginSql = `select u.id, u.name, u.email, u.role, u.password, u.token_version, ${userJson('u')} as json
  from users u where u.email = $1 and u.deleted_at is null`;

/** The token's user, still active and not revoked: $1 = id, $2 = token version. */
const actor = `actor as (select id, name from users where id = $1 and token_version = $2 and deleted_at is null)`;

/** $1, $2 actor; $3 title, $4 slug, $5 body. No row back = the actor is gone (401). */
export const createPostSql = `with ${actor},
  ins as (insert into posts (created_at, updated_at, user_id, title, slug, body, published)
          select now(), now(), actor.id, $3, $4, $5, false from actor returning *)
  select ${jsonObjectSql('p', [
    ['id', 'int'], ['user_id', 'int'], ['title', 'string'], ['slug', 'string'], ['body', 'string'], ['published', 'bool'],
    ['published_at', 'timestamp?'], ['created_at', 'timestamp'], ['updated_at', 'timestamp'], ['deleted_at', 'timestamp?'],
    ['user', 'json', jsonObjectSql('u', [['id', 'int'], ['name', 'string']])],
    ['comments', 'json', `'[]'`], ['comments_count', 'int', '0'],
  ])} as post
  from ins p join actor u on u.id = p.user_id`;

/** $1, $2 actor; $3 post id, $4 body. Says which of actor / post was missing. */
export const createCommentSql = `with ${actor},
  post as (select id from posts where id = $3 and deleted_at is null),
  ins as (insert into comments (created_at, updated_at, post_id, user_id, body)
          select now(), now(), post.id, actor.id, $4 from actor, post returning *)
  select exists(select 1 from actor) as actor, exists(select 1 from post) as post,
    (select ${commentJson('rest')} from ins c join actor cu on cu.id = c.user_id) as comment`;
