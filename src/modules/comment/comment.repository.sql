-- The SQL that comment.repository.ts sends, written by `npm run sql` (scripts/sql.ts): each function as the service
-- calls it, with the ORM's filters, values bound as $1, $2, ... test/repository-sql.test.ts fails when it changes.

-- commentsOfPosts: GraphQL Post.comments: the comments of a page of posts
select "c"."id", "c"."post_id", "c"."user_id", "c"."body", "c"."created_at", "c"."updated_at", u.name as author_name
from "comments" as "c"
left join (select "vu"."id", "vu"."name" from "users" as "vu" where "vu"."deleted_at" is null) as "u" on u.id = c.user_id
where "c"."post_id" in ($1, $2)
order by "c"."created_at" asc, "c"."id" asc;

-- commentJsonStatement: POST /posts/:id/comments: the answer, read back in the create
select "c"."id", ('{"id":' || (c.id)::text || ',"post_id":' || (c.post_id)::text || ',"user_id":' || (c.user_id)::text || ',"body":' || to_json((c.body)::text)::text || ',"created_at":' || '"' || to_char((c.created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' || ',"updated_at":' || '"' || to_char((c.updated_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' || ',"user":' || coalesce((case when cu.name is null then null else ('{"id":' || (cu.id)::text || ',"name":' || to_json((cu.name)::text)::text || '}') end)::text, 'null') || '}')::text as json
from "comments" as "c"
left join (select "vu"."id", "vu"."name" from "users" as "vu" where "vu"."deleted_at" is null) as "cu" on cu.id = c.user_id
where "c"."id" in ($1);

-- writtenCommentJson: PATCH /comments/:id: the answer, read back in the write
select "c"."id", ('{"id":' || (c.id)::text || ',"post_id":' || (c.post_id)::text || ',"user_id":' || (c.user_id)::text || ',"body":' || to_json((c.body)::text)::text || ',"created_at":' || '"' || to_char((c.created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' || ',"updated_at":' || '"' || to_char((c.updated_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' || ',"user":' || coalesce((case when cu.name is null then null else ('{"id":' || (cu.id)::text || ',"name":' || to_json((cu.name)::text)::text || '}') end)::text, 'null') || '}')::text as json
from "comments" as "c"
left join (select "vu"."id", "vu"."name" from "users" as "vu" where "vu"."deleted_at" is null) as "cu" on cu.id = c.user_id
where "c"."id" in ($1);

-- commentJsons: GraphQL Comment.etag: a batch of comments' REST answers
select "c"."id", ('{"id":' || (c.id)::text || ',"post_id":' || (c.post_id)::text || ',"user_id":' || (c.user_id)::text || ',"body":' || to_json((c.body)::text)::text || ',"created_at":' || '"' || to_char((c.created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' || ',"updated_at":' || '"' || to_char((c.updated_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' || ',"user":' || coalesce((case when cu.name is null then null else ('{"id":' || (cu.id)::text || ',"name":' || to_json((cu.name)::text)::text || '}') end)::text, 'null') || '}')::text as json
from "comments" as "c"
left join (select "vu"."id", "vu"."name" from "users" as "vu" where "vu"."deleted_at" is null) as "cu" on cu.id = c.user_id
where "c"."id" in ($1, $2);
