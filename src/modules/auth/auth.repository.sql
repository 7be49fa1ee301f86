-- The SQL that auth.repository.ts sends, written by `npm run sql` (scripts/sql.ts): each function as the service
-- calls it, with the ORM's filters, values bound as $1, $2, ... test/repository-sql.test.ts fails when it changes.

-- storeResetToken: POST /auth/forgot-password
insert into password_reset_tokens (email, token, created_at)
values ($1, $2, now())
on conflict (email) do update set token = excluded.token, created_at = excluded.created_at;

-- claimResetToken: POST /auth/reset-password
delete from password_reset_tokens
where email = $1 and token = $2
returning email;
