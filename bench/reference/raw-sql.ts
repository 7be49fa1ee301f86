/**
 * The raw reference's statements (bench/reference/raw.ts): each answer is ONE named prepared
 * statement that returns the whole response body as text, pagination keys included, so Node only
 * writes it out. The REST shapes are CONTRACT 4's; the GraphQL one is exactly the fields of the
 * benchmark's `posts(page)` query. Reads use the service's indexes the same way (a deferred join:
 * the slice's ids from the partial index, then those rows), so both sides pay the same PostgreSQL work.
 *
 * The JSON is built as the service builds it: concatenated by src/db/json-sql.ts's generators
 * (compact, keys in the service's order, strings through to_json, timestamps as Date#toJSON),
 * not by json_build_object (which writes `{"id" : 1, ...}` and costs PostgreSQL more). The
 * envelopes (data, total, perPage, ...) are written the same way in the service's key order
 * (src/core/pagination.ts, src/http/present.ts jsonListText), so each body is byte for byte the
 * service's answer (bench/run.ts checks it before any load).
 */
import { jsonAggSql, jsonArraySql, jsonObjectSql, type JsonKey } from '../../src/db/json-sql';

/** An author as REST and GraphQL embed it: {id, name}; null when the users' filter hid the user (no joined row). */
const authorJson = (alias: string) => `case when ${alias}.id is null then null else ${jsonObjectSql(alias, [['id', 'int'], ['name', 'string']])} end`;

/** Opaque cursor as the service encodes it: base64url of {"id":N,"to":"next"|"prev"}. */
const cursor = (id: string, to: 'next' | 'prev') =>
  `rtrim(translate(encode(convert_to('{"id":' || ${id} || ',"to":"${to}"}', 'UTF8'), 'base64'), '+/', '-_'), '=')`;

type Shape = 'rest' | 'graphql';

/**
 * A post (alias `p`) with its author (`u`) and its comments' JSON texts (`cm.comments`, a text[]
 * in order): REST's keys (CONTRACT 4, the service's restPostJson) or the benchmark query's fields.
 */
function postJson(shape: Shape): string {
  const keys: JsonKey[] = shape === 'rest'
    ? [
      ['id', 'int'], ['user_id', 'int'], ['title', 'string'], ['slug', 'string'], ['body', 'string'], ['published', 'bool'],
      ['published_at', 'timestamp?'], ['created_at', 'timestamp'], ['updated_at', 'timestamp'], ['deleted_at', 'timestamp?'],
      ['user', 'json?', authorJson('u')],
      ['comments', 'json', jsonArraySql('cm.comments')],
      ['comments_count', 'int', 'cardinality(cm.comments)'],
    ]
    : [
      ['id', 'int'], ['title', 'string'], ['slug', 'string'], ['body', 'string'], ['published', 'bool'],
      ['publishedAt', 'timestamp?', 'p.published_at'], ['createdAt', 'timestamp', 'p.created_at'],
      ['user', 'json?', authorJson('u')],
      ['comments', 'json', jsonArraySql('cm.comments')],
      ['commentsCount', 'int', 'cardinality(cm.comments)'],
    ];
  return jsonObjectSql('p', keys);
}

/** A comment (alias `c`) with its author (`cu`): REST's keys (the service's restCommentJson) or the query's fields. */
export function commentJson(shape: Shape): string {
  return jsonObjectSql('c', shape === 'rest'
    ? [['id', 'int'], ['post_id', 'int'], ['user_id', 'int'], ['body', 'string'], ['created_at', 'timestamp'], ['updated_at', 'timestamp'], ['user', 'json?', authorJson('cu')]]
    : [['id', 'int'], ['body', 'string'], ['user', 'json?', authorJson('cu')]]);
}

/** Posts `p` with author `u` and comments `cm.comments` (oldest first, each with its author), where `where`. */
const postsFrom = (shape: Shape, where: string) => `from posts p
    left join users u on u.id = p.user_id and u.deleted_at is null
    cross join lateral (
      select ${jsonAggSql(commentJson(shape), 'c.created_at, c.id')} as comments
      from comments c left join users cu on cu.id = c.user_id and cu.deleted_at is null
      where c.post_id = p.id) cm
    where ${where}`;

/** `data`: the JSON array of the posts of the id list `ids` (a subquery), in `order`. */
const postsData = (shape: Shape, ids: string, order: string) =>
  `(select ${jsonArraySql(jsonAggSql(postJson(shape), order))} ${postsFrom(shape, `p.id in (${ids})`)})`;

/** The page format's keys (pagination.ts PageResult, in its order) around `data`, given the total `t.n`; $1 = page, $2 = per page. */
function pageBody(data: string, count: string, extra = ''): string {
  const offset = '($1::int - 1) * $2::int';
  const last = 'greatest(1, (t.n + $2::int - 1) / $2::int)';
  return `with t as (${count})
    select ${jsonObjectSql('t', [
      ['data', 'json', data], ['total', 'int', 't.n'], ['perPage', 'int', '$2::int'], ['currentPage', 'int', '$1::int'], ['lastPage', 'int', last],
      ['from', 'int?', `case when t.n > ${offset} then ${offset} + 1 end`],
      ['to', 'int?', `case when t.n > ${offset} then least(t.n, $1::int * $2::int) end`],
      ['nextPage', 'int?', `case when $1::int < ${last} then $1::int + 1 end`],
    ])} as body
    from t ${extra}`;
}

const livePage = `select id from posts where deleted_at is null order by created_at desc, id desc limit $2::int offset ($1::int - 1) * $2::int`;
const liveCount = `select count(*)::int as n from posts where deleted_at is null`;

export interface Named { name: string; text: string }

/** GET /posts?page=N ($1 page, $2 per page). */
export const postsPage: Named = { name: 'posts_page', text: pageBody(postsData('rest', livePage, 'p.created_at desc, p.id desc'), liveCount) };

/**
 * The benchmark's GraphQL posts(page) query, as `{"data":{"posts":...}}` and the newline Apollo
 * writes after it (@apollo/server's prettyJSONStringify), so the bytes are the service's.
 */
export const postsPageGraphql: Named = {
  name: 'posts_page_graphql',
  text: `with t as (${liveCount})
    select ${jsonObjectSql('t', [['data', 'json', jsonObjectSql('t', [['posts', 'json', jsonObjectSql('t', [
      ['data', 'json', postsData('graphql', livePage, 'p.created_at desc, p.id desc')],
      ['total', 'int', 't.n'], ['perPage', 'int', '$2::int'], ['currentPage', 'int', '$1::int'], ['lastPage', 'int', 'greatest(1, (t.n + $2::int - 1) / $2::int)'],
    ])]])]])} || E'\\n' as body from t`,
};

/** GET /posts?paginate=simple&page=N ($1 page, $2 per page): one extra row says hasMore. */
export const postsSimple: Named = {
  name: 'posts_simple',
  text: `with s as (select id, row_number() over (order by created_at desc, id desc) as k
      from (select id, created_at from posts where deleted_at is null order by created_at desc, id desc
            limit $2::int + 1 offset ($1::int - 1) * $2::int) x)
    select ${jsonObjectSql('s', [
      ['data', 'json', postsData('rest', 'select id from s where k <= $2::int', 'p.created_at desc, p.id desc')],
      ['hasMore', 'bool', '(select count(*) from s) > $2::int'],
    ])} as body`,
};

/**
 * GET /posts?paginate=cursor&cursor=<next of $1> (direction desc), page size written in (with it
 * as a parameter: ~6 ms of PostgreSQL CPU per request, written in: ~4.7). Still more than the
 * service's cursor statements (~2.4 ms, npm run bench), not yet explained: until it is, the
 * cursor ratio flatters the service.
 */
const CURSOR_PER_PAGE = 10;
export const postsCursor: Named = {
  name: 'posts_cursor',
  text: `with s as (select id from posts where deleted_at is null and id < $1::int order by id desc limit ${CURSOR_PER_PAGE + 1}),
      pg as (select id from s order by id desc limit ${CURSOR_PER_PAGE}),
      edge as (select min(id) as lo, coalesce(max(id), $1::int - 1) as hi, (select count(*) from s) > ${CURSOR_PER_PAGE} as more from pg),
      other as (select edge.*, exists(select 1 from posts where deleted_at is null and id > edge.hi) as back from edge)
    select ${jsonObjectSql('other', [
      ['data', 'json', postsData('rest', 'select id from pg', 'p.id desc')],
      ['nextCursor', 'string?', `case when more then ${cursor('lo', 'next')} end`],
      ['prevCursor', 'string?', `case when back then ${cursor('hi', 'prev')} end`],
      ['hasNextPage', 'bool', 'more'], ['hasPrevPage', 'bool', 'back'],
      ['perPage', 'int', String(CURSOR_PER_PAGE)], ['path', 'string', `'/posts'`],
    ])} as body
    from other`,
};

/** GET /posts/:id ($1): no row when absent or trashed (404). */
export const postById: Named = {
  name: 'post_by_id',
  text: `select ${postJson('rest')} as body ${postsFrom('rest', 'p.id = $1::int and p.deleted_at is null')}`,
};

/** The token's user, still active, not revoked, in one of the roles: $3 = id, $4 = token version. */
const actorWithRole = (roles: string[]) =>
  `select exists(select 1 from users where id = $3::int and token_version = $4::int and deleted_at is null and role in (${roles.map((r) => `'${r}'`).join(', ')})) as ok`;

/** GET /trash?page=N for a moderator ($1 page, $2 per page, $3/$4 the token's id and version); null body = 403. */
export const trashPage: Named = {
  name: 'trash_page',
  text: pageBody(
    `case when a.ok then ${postsData('rest', 'select id from posts where deleted_at is not null order by deleted_at desc, id desc limit $2::int offset ($1::int - 1) * $2::int', 'p.deleted_at desc, p.id desc')} end`,
    'select count(*)::int as n from posts where deleted_at is not null',
    `, (${actorWithRole(['moderator', 'admin'])}) a where a.ok`,
  ),
};

/** A user's REST keys (the service's USER_JSON: presentUser, snake_cased) over alias `x`. */
export const userJson = (x: string) => jsonObjectSql(x, [
  ['id', 'int'], ['name', 'string'], ['email', 'string'], ['role', 'string'], ['email_verified_at', 'timestamp?'], ['created_at', 'timestamp'], ['updated_at', 'timestamp'],
]);

/** GET /admin/users?page=N for an admin ($1 page, $2 per page, $3/$4 the token's). */
export const adminUsersPage: Named = {
  name: 'admin_users_page',
  text: pageBody(
    `(select ${jsonArraySql(jsonAggSql(userJson('u'), 'u.id'))}
      from (select * from users where deleted_at is null order by id limit $2::int offset ($1::int - 1) * $2::int) u)`,
    'select count(*)::int as n from users where deleted_at is null',
    `, (${actorWithRole(['admin'])}) a where a.ok`,
  ),
};

/** GET /tenant/posts for tenant $1: a plain array, id ascending (the service's TENANT_POST_JSON). */
export const tenantPosts: Named = {
  name: 'tenant_posts',
  text: `select ${jsonArraySql(jsonAggSql(jsonObjectSql('t', [
    ['id', 'int'], ['tenant_id', 'int'], ['title', 'string'], ['body', 'string'], ['created_at', 'timestamp'], ['updated_at', 'timestamp'],
  ]), 't.id'))} as body
    from tenant_posts t where t.tenant_id = $1::int`,
};
