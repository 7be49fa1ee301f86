-- The SQL that user.repository.ts sends, written by `npm run sql` (scripts/sql.ts): each function as the service
-- calls it, with the ORM's filters, values bound as $1, $2, ... test/repository-sql.test.ts fails when it changes.

-- userJsonSource: GET /admin/users: the first page and its total
select x.id, ('{"id":' || (x.id)::text || ',"name":' || to_json((x.name)::text)::text || ',"email":' || to_json((x.email)::text)::text || ',"role":' || to_json((x.role)::text)::text || ',"email_verified_at":' || coalesce('"' || to_char((x.email_verified_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"', 'null') || ',"created_at":' || '"' || to_char((x.created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' || ',"updated_at":' || '"' || to_char((x.updated_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' || '}')::text as json, x.total
from (select "u"."id", "u"."name", "u"."email", "u"."role", "u"."email_verified_at", "u"."created_at", "u"."updated_at", (select count(*) as "count" from "users" as "c" where "c"."deleted_at" is null) as "total" from "users" as "u" where "u"."deleted_at" is null order by "u"."id" asc limit 20 offset $1) x
order by x.id asc;

-- userViewSource: GraphQL adminUsersCursor: a slice
select "u"."id", "u"."name", "u"."email", "u"."role", "u"."email_verified_at", "u"."created_at", "u"."updated_at"
from "users" as "u"
where "u"."deleted_at" is null
order by "u"."id" asc
limit 21;

-- userJson: the auth payload's user
select x.id, ('{"id":' || (x.id)::text || ',"name":' || to_json((x.name)::text)::text || ',"email":' || to_json((x.email)::text)::text || ',"role":' || to_json((x.role)::text)::text || ',"email_verified_at":' || coalesce('"' || to_char((x.email_verified_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"', 'null') || ',"created_at":' || '"' || to_char((x.created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' || ',"updated_at":' || '"' || to_char((x.updated_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' || '}')::text as json
from (select "u"."id", "u"."name", "u"."email", "u"."role", "u"."email_verified_at", "u"."created_at", "u"."updated_at" from "users" as "u" where "u"."id" = $1 and "u"."deleted_at" is null order by "u"."id" asc limit 1) x
order by x.id asc;

-- userJsons: GraphQL User.etag: a batch of users' REST answers
select x.id, ('{"id":' || (x.id)::text || ',"name":' || to_json((x.name)::text)::text || ',"email":' || to_json((x.email)::text)::text || ',"role":' || to_json((x.role)::text)::text || ',"email_verified_at":' || coalesce('"' || to_char((x.email_verified_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"', 'null') || ',"created_at":' || '"' || to_char((x.created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' || ',"updated_at":' || '"' || to_char((x.updated_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' || '}')::text as json
from (select "u"."id", "u"."name", "u"."email", "u"."role", "u"."email_verified_at", "u"."created_at", "u"."updated_at" from "users" as "u" where "u"."id" in ($1, $2) and "u"."deleted_at" is null order by "u"."id" asc limit 2) x
order by x.id asc;

-- actorById: every authenticated request: the bearer token's user
select "u"."id", "u"."name", "u"."email", "u"."role", "u"."email_verified_at", "u"."created_at", "u"."updated_at", "u"."token_version"
from "users" as "u"
where "u"."id" = $1 and "u"."deleted_at" is null;

-- authorsById: GraphQL Post.user, Comment.user: a batch of authors
select "u"."id", "u"."name"
from "users" as "u"
where "u"."id" in ($1, $2) and "u"."deleted_at" is null;
