-- The SQL that idempotency.repository.ts sends, written by `npm run sql` (scripts/sql.ts): each function as the service
-- calls it, with the ORM's filters, values bound as $1, $2, ... test/repository-sql.test.ts fails when it changes.

-- lockAndLookUp: a create with an Idempotency-Key: the key's lock and its answer
select pg_try_advisory_xact_lock($1::bigint) as locked, k.fingerprint, k.status, k.body, k.resource_id
from (values (1)) one
left join idempotency_keys k on k.scope = $2 and k.key = $3 and k.expires_at > now();

-- storeAnswerOf: the key's answer, stored by the statement that reads the new post back
insert into idempotency_keys (scope, key, fingerprint, status, body, resource_id, created_at, expires_at)
select $1, $2, $3, $4, answer.json, $5, now(), now() + make_interval(hours => $6)
from (select p.id, ('{"id":' || (p.id)::text || ',"user_id":' || (p.user_id)::text || ',"title":' || to_json((p.title)::text)::text || ',"slug":' || to_json((p.slug)::text)::text || ',"body":' || to_json((p.body)::text)::text || ',"published":' || (p.published)::text || ',"published_at":' || coalesce('"' || to_char((p.published_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"', 'null') || ',"created_at":' || '"' || to_char((p.created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' || ',"updated_at":' || '"' || to_char((p.updated_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' || ',"deleted_at":' || coalesce('"' || to_char((p.deleted_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"', 'null') || ',"user":' || coalesce((case when u.name is null then null else ('{"id":' || (p.user_id)::text || ',"name":' || to_json((u.name)::text)::text || '}') end)::text, 'null') || ',"comments":' || (('[' || array_to_string(cm.comments_json, ',') || ']'))::text || ',"comments_count":' || (cardinality(cm.comments_json))::text || '}')::text as json from "posts" as "p" left join (select "vu"."id", "vu"."name" from "users" as "vu" where "vu"."deleted_at" is null) as "u" on u.id = p.user_id inner join lateral (select coalesce(array_agg(('{"id":' || (c.id)::text || ',"post_id":' || (c.post_id)::text || ',"user_id":' || (c.user_id)::text || ',"body":' || to_json((c.body)::text)::text || ',"created_at":' || '"' || to_char((c.created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' || ',"updated_at":' || '"' || to_char((c.updated_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' || ',"user":' || coalesce((case when cu.name is null then null else ('{"id":' || (cu.id)::text || ',"name":' || to_json((cu.name)::text)::text || '}') end)::text, 'null') || '}') order by c.created_at, c.id), '{}'::text[]) as comments_json from "comments" as "c" left join (select "vu"."id", "vu"."name" from "users" as "vu" where "vu"."deleted_at" is null) as "cu" on cu.id = c.user_id where (c.post_id = p.id)) as "cm" on true where "p"."id" = $7 and "p"."deleted_at" is null order by "p"."id" asc limit 1) answer
on conflict (scope, key) do update set fingerprint = excluded.fingerprint, status = excluded.status, body = excluded.body,
resource_id = excluded.resource_id, created_at = excluded.created_at, expires_at = excluded.expires_at
where idempotency_keys.expires_at <= now()
returning body as json;

-- storeAnswer: the key's answer, stored after the create
insert into idempotency_keys (scope, key, fingerprint, status, body, resource_id, created_at, expires_at)
values ($1, $2, $3, $4, $5, $6, now(), now() + make_interval(hours => $7))
on conflict (scope, key) do update set fingerprint = excluded.fingerprint, status = excluded.status, body = excluded.body,
resource_id = excluded.resource_id, created_at = excluded.created_at, expires_at = excluded.expires_at
where idempotency_keys.expires_at <= now()
returning 1;

-- purgeExpiredKeys: the keys' expiry
delete from idempotency_keys
where expires_at <= now();
