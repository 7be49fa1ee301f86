/**
 * The raw reference's statements (bench/reference/raw.ts): each answer is ONE named prepared
 * statement that returns the whole response body as text, pagination keys included, so Node only
 * writes it out. The REST shapes are CONTRACT 4's; the GraphQL one is exactly the fields of the
 * benchmark's `posts(page)` query. Reads use the service's indexes the same way (a deferred join:
 * the slice's ids from the partial index, then those rows), so both sides pay the same PostgreSQL work.
 */

/** ISO-8601 UTC with milliseconds, as JSON.stringify writes a Date. */
const iso = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const author = (alias: string) => `case when ${alias}.id is null then null else json_build_object('id', ${alias}.id, 'name', ${alias}.name) end`;
/** Opaque cursor as the service encodes it: base64url of {"id":N,"to":"next"|"prev"}. */
const cursor = (id: string, to: 'next' | 'prev') =>
  `rtrim(translate(encode(convert_to('{"id":' || ${id} || ',"to":"${to}"}', 'UTF8'), 'base64'), '+/', '-_'), '=')`;

type Shape = 'rest' | 'graphql';

function postJson(shape: Shape): string {
  return shape === 'rest'
    ? `json_build_object('id', p.id, 'user_id', p.user_id, 'title', p.title, 'slug', p.slug, 'body', p.body,
         'published', p.published, 'published_at', ${iso('p.published_at')}, 'created_at', ${iso('p.created_at')},
         'updated_at', ${iso('p.updated_at')}, 'deleted_at', ${iso('p.deleted_at')}, 'user', ${author('u')},
         'comments', cm.comments, 'comments_count', cm.n)`
    : `json_build_object('id', p.id, 'title', p.title, 'slug', p.slug, 'body', p.body, 'published', p.published,
         'publishedAt', ${iso('p.published_at')}, 'createdAt', ${iso('p.created_at')}, 'user', ${author('u')},
         'comments', cm.comments, 'commentsCount', cm.n)`;
}

function commentJson(shape: Shape): string {
  return shape === 'rest'
    ? `json_build_object('id', c.id, 'post_id', c.post_id, 'user_id', c.user_id, 'body', c.body,
         'created_at', ${iso('c.created_at')}, 'updated_at', ${iso('c.updated_at')}, 'user', ${author('cu')})`
    : `json_build_object('id', c.id, 'body', c.body, 'user', ${author('cu')})`;
}

/** `data`: the posts of the id list `ids` (a subquery), in `order`, each with author and comments. */
function postsData(shape: Shape, ids: string, order: string): string {
  return `(select coalesce(json_agg(${postJson(shape)} order by ${order}), '[]'::json)
    from posts p
    left join users u on u.id = p.user_id and u.deleted_at is null
    cross join lateral (
      select coalesce(json_agg(${commentJson(shape)} order by c.created_at, c.id), '[]'::json) as comments, count(*)::int as n
      from comments c left join users cu on cu.id = c.user_id and cu.deleted_at is null
      where c.post_id = p.id) cm
    where p.id in (${ids}))`;
}

/** The page format's keys around `data`, given the total `t.n`; $1 = page, $2 = per page. */
function pageBody(data: string, count: string, extra = ''): string {
  return `with t as (${count})
    select json_build_object('data', ${data}, 'total', t.n, 'perPage', $2::int, 'currentPage', $1::int,
      'lastPage', greatest(1, (t.n + $2::int - 1) / $2::int),
      'from', case when t.n > ($1::int - 1) * $2::int then ($1::int - 1) * $2::int + 1 end,
      'to', case when t.n > ($1::int - 1) * $2::int then least(t.n, $1::int * $2::int) end,
      'nextPage', case when $1::int < greatest(1, (t.n + $2::int - 1) / $2::int) then $1::int + 1 end)::text as body
    from t ${extra}`;
}

const livePage = `select id from posts where deleted_at is null order by created_at desc, id desc limit $2::int offset ($1::int - 1) * $2::int`;
const liveCount = `select count(*)::int as n from posts where deleted_at is null`;

export interface Named { name: string; text: string }

/** GET /posts?page=N ($1 page, $2 per page). */
export const postsPage: Named = { name: 'posts_page', text: pageBody(postsData('rest', livePage, 'p.created_at desc, p.id desc'), liveCount) };

/** The benchmark's GraphQL posts(page) query, as `{"data":{"posts":...}}`. */
export const postsPageGraphql: Named = {
  name: 'posts_page_graphql',
  text: `with t as (${liveCount})
    select json_build_object('data', json_build_object('posts', json_build_object(
      'data', ${postsData('graphql', livePage, 'p.created_at desc, p.id desc')},
      'total', t.n, 'perPage', $2::int, 'currentPage', $1::int, 'lastPage', greatest(1, (t.n + $2::int - 1) / $2::int))))::text as body from t`,
};

/** GET /posts?paginate=simple&page=N ($1 page, $2 per page): one extra row says hasMore. */
export const postsSimple: Named = {
  name: 'posts_simple',
  text: `with s as (select id, row_number() over (order by created_at desc, id desc) as k
      from (select id, created_at from posts where deleted_at is null order by created_at desc, id desc
            limit $2::int + 1 offset ($1::int - 1) * $2::int) x)
    select json_build_object('data', ${postsData('rest', 'select id from s where k <= $2::int', 'p.created_at desc, p.id desc')},
      'hasMore', (select count(*) from s) > $2::int)::text as body`,
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
    select json_build_object('data', ${postsData('rest', 'select id from pg', 'p.id desc')},
      'nextCursor', case when more then ${cursor('lo', 'next')} end,
      'prevCursor', case when back then ${cursor('hi', 'prev')} end,
      'hasNextPage', more, 'hasPrevPage', back, 'perPage', ${CURSOR_PER_PAGE}, 'path', '/posts')::text as body
    from other`,
};

/** GET /posts/:id ($1). */
export const postById: Named = {
  name: 'post_by_id',
  text: `select (${postsData('rest', 'select id from posts where id = $1::int and deleted_at is null', 'p.id')} -> 0)::text as body`,
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

/** GET /admin/users?page=N for an admin ($1 page, $2 per page, $3/$4 the token's). */
export const adminUsersPage: Named = {
  name: 'admin_users_page',
  text: pageBody(
    `(select coalesce(json_agg(json_build_object('id', u.id, 'name', u.name, 'email', u.email, 'role', u.role,
        'email_verified_at', ${iso('u.email_verified_at')}, 'created_at', ${iso('u.created_at')}, 'updated_at', ${iso('u.updated_at')}) order by u.id), '[]'::json)
      from (select * from users where deleted_at is null order by id limit $2::int offset ($1::int - 1) * $2::int) u)`,
    'select count(*)::int as n from users where deleted_at is null',
    `, (${actorWithRole(['admin'])}) a where a.ok`,
  ),
};

/** GET /tenant/posts for tenant $1: a plain array, id ascending. */
export const tenantPosts: Named = {
  name: 'tenant_posts',
  text: `select coalesce(json_agg(json_build_object('id', id, 'tenant_id', tenant_id, 'title', title, 'body', body,
      'created_at', ${iso('created_at')}, 'updated_at', ${iso('updated_at')}) order by id), '[]'::json)::text as body
    from tenant_posts where tenant_id = $1::int`,
};
