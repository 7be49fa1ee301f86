/**
 * The raw reference's writes and login (bench/reference/raw.ts): each is ONE statement that
 * returns the finished JSON as text, so Node only splices strings. Its reads are in raw-sql.ts.
 */
type Shape = 'rest' | 'graphql';

/** ISO-8601 UTC with milliseconds, as the service's JSON has it. */
const iso = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const author = (alias: string) => `case when ${alias}.id is null then null else json_build_object('id', ${alias}.id, 'name', ${alias}.name) end`;

function commentJson(shape: Shape): string {
  return shape === 'rest'
    ? `json_build_object('id', c.id, 'post_id', c.post_id, 'user_id', c.user_id, 'body', c.body,
         'created_at', ${iso('c.created_at')}, 'updated_at', ${iso('c.updated_at')}, 'user', ${author('cu')})`
    : `json_build_object('id', c.id, 'body', c.body, 'user', ${author('cu')})`;
}

/** $1 = email (already trimmed and lower-cased). */
export const loginSql = `select id, name, email, role, password, token_version,
    json_build_object('id', id, 'name', name, 'email', email, 'role', role,
      'email_verified_at', ${iso('email_verified_at')}, 'created_at', ${iso('created_at')}, 'updated_at', ${iso('updated_at')})::text as json
  from users where email = $1 and deleted_at is null`;

/** The token's user, still active and not revoked: $1 = id, $2 = token version. */
const actor = `actor as (select id, name from users where id = $1 and token_version = $2 and deleted_at is null)`;

/** $1, $2 actor; $3 title, $4 slug, $5 body. No row back = the actor is gone (401). */
export const createPostSql = `with ${actor},
  ins as (insert into posts (created_at, updated_at, user_id, title, slug, body, published)
          select now(), now(), actor.id, $3, $4, $5, false from actor returning *)
  select json_build_object('id', p.id, 'user_id', p.user_id, 'title', p.title, 'slug', p.slug, 'body', p.body,
    'published', p.published, 'published_at', null, 'created_at', ${iso('p.created_at')}, 'updated_at', ${iso('p.updated_at')},
    'deleted_at', null, 'user', json_build_object('id', u.id, 'name', u.name), 'comments', '[]'::json, 'comments_count', 0)::text as post
  from ins p join actor u on u.id = p.user_id`;

/** $1, $2 actor; $3 post id, $4 body. Says which of actor / post was missing. */
export const createCommentSql = `with ${actor},
  post as (select id from posts where id = $3 and deleted_at is null),
  ins as (insert into comments (created_at, updated_at, post_id, user_id, body)
          select now(), now(), post.id, actor.id, $4 from actor, post returning *)
  select exists(select 1 from actor) as actor, exists(select 1 from post) as post,
    (select ${commentJson('rest')} from ins c join actor cu on cu.id = c.user_id)::text as comment`;
