-- The SQL that trash.repository.ts sends, written by `npm run sql` (scripts/sql.ts): each function as the service
-- calls it, with the ORM's filters, values bound as $1, $2, ... test/repository-sql.test.ts fails when it changes.

-- tryRetentionLock: the trash retention: one instance at a time
select pg_try_advisory_xact_lock($1) as locked;

-- deleteTrashedBefore: the trash retention: posts trashed more than RETENTION days ago
delete from posts
where deleted_at is not null and deleted_at < now() - make_interval(days => $1)
returning id;
