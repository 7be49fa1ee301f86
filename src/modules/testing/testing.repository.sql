-- The SQL that testing.repository.ts sends, written by `npm run sql` (scripts/sql.ts): each function as the service
-- calls it, with the ORM's filters, values bound as $1, $2, ... test/repository-sql.test.ts fails when it changes.

-- truncateTables: POST /__test/reset
select quote_ident(tablename) as name
from pg_tables
where schemaname = current_schema() and tablename <> all($1::text[])
order by 1;
truncate table comments, idempotency_keys, job_runs, mail_outbox, password_reset_tokens, posts, rate_attempts, rate_limits, tenant_posts, users restart identity cascade;
update page_versions set v = v + 1;

-- removeCreated: the test server stops: what it created is dropped
select oid::regclass::text as name
from pg_class
where relnamespace = current_schema()::regnamespace and relkind in ('r', 'p')
order by 1;
drop table if exists comments, idempotency_keys, job_runs, mail_outbox, mikro_orm_migrations, page_versions, password_reset_tokens, posts, rate_attempts, rate_limits, tenant_posts, users cascade;
select oid::regclass::text as name, relkind as kind
from pg_class
where relnamespace = current_schema()::regnamespace and relkind in ('v', 'm', 'S')
order by 1;
select oid, oid::regprocedure::text as sig
from pg_proc
where pronamespace = current_schema()::regnamespace
order by 2;
drop function if exists mail_outbox_queued() cascade;
drop function if exists page_versions_bump() cascade;

-- requireEmptyDatabase: the test server starts on DATABASE_URL
select c.oid::regclass::text as name
from pg_class c
where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p', 'v', 'm', 'S', 'f')
order by 1
limit 5;
select p.oid
from pg_proc p
where p.pronamespace = current_schema()::regnamespace;
