-- The SQL that mail.repository.ts sends, written by `npm run sql` (scripts/sql.ts): each function as the service
-- calls it, with the ORM's filters, values bound as $1, $2, ... test/repository-sql.test.ts fails when it changes.

-- claimNextMail: the outbox: the next due mail
select set_config('idle_in_transaction_session_timeout', $1, true);
select id, to_address, subject, text, attempts
from mail_outbox
where sent_at is null and next_attempt_at <= now()
order by next_attempt_at, id
limit 1 for update skip locked;

-- markMailSent: the outbox: sent
update mail_outbox set sent_at = now(), attempts = attempts + 1, last_error = null, text = ''
where id = $1;

-- markMailFailed: the outbox: a failed send, retried later
update mail_outbox set attempts = $1, last_error = $2, next_attempt_at = now() + interval '1 millisecond' * $3
where id = $4;

-- deleteSentMails: the outbox's cleanup
delete from mail_outbox
where sent_at < now() - interval '1 millisecond' * $1;
