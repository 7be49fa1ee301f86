-- The SQL that tenant-post.repository.ts sends, written by `npm run sql` (scripts/sql.ts): each function as the service
-- calls it, with the ORM's filters, values bound as $1, $2, ... test/repository-sql.test.ts fails when it changes.

-- tenantPostJsons: GET /tenant/posts: the tenant's posts (tenant 1 from X-Tenant-Id)
select x.tenant_id, ('{"id":' || (x.id)::text || ',"tenant_id":' || (x.tenant_id)::text || ',"title":' || to_json((x.title)::text)::text || ',"body":' || to_json((x.body)::text)::text || ',"created_at":' || '"' || to_char((x.created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' || ',"updated_at":' || '"' || to_char((x.updated_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' || '}')::text as json
from (select "t"."id", "t"."tenant_id", "t"."title", "t"."body", "t"."created_at", "t"."updated_at" from "tenant_posts" as "t" where "t"."tenant_id" = $1 order by "t"."id" asc) x
order by x.id asc;

-- tenantPostJsons: GET /tenant/admin/posts: every tenant's (the tenant filter lifted)
select x.tenant_id, ('{"id":' || (x.id)::text || ',"tenant_id":' || (x.tenant_id)::text || ',"title":' || to_json((x.title)::text)::text || ',"body":' || to_json((x.body)::text)::text || ',"created_at":' || '"' || to_char((x.created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' || ',"updated_at":' || '"' || to_char((x.updated_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' || '}')::text as json
from (select "t"."id", "t"."tenant_id", "t"."title", "t"."body", "t"."created_at", "t"."updated_at" from "tenant_posts" as "t" order by "t"."id" asc) x
order by x.id asc;

-- tenantPostViews: GraphQL tenantPosts
select "t"."id", "t"."tenant_id", "t"."title", "t"."body", "t"."created_at", "t"."updated_at"
from "tenant_posts" as "t"
where "t"."tenant_id" = $1
order by "t"."id" asc;

-- writtenTenantPostJson: POST /tenant/posts: the answer, read back
select x.tenant_id, ('{"id":' || (x.id)::text || ',"tenant_id":' || (x.tenant_id)::text || ',"title":' || to_json((x.title)::text)::text || ',"body":' || to_json((x.body)::text)::text || ',"created_at":' || '"' || to_char((x.created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' || ',"updated_at":' || '"' || to_char((x.updated_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' || '}')::text as json
from (select "t"."id", "t"."tenant_id", "t"."title", "t"."body", "t"."created_at", "t"."updated_at" from "tenant_posts" as "t" where "t"."id" = $1 and "t"."tenant_id" = $2 order by "t"."id" asc) x
order by x.id asc;
