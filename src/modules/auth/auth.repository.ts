import type { EntityManager } from '@mikro-orm/postgresql';
import { runStatement, sql } from '../../db/statements';

/**
 * The password reset secrets' statements (everything else of auth goes through the ORM's entities
 * and db/rate-limit.ts); the SQL of each is in auth.repository.sql (npm run sql).
 */

/** Keeps `token` (a secret's hash) as `email`'s one reset secret: the upsert on the primary key replaces any older one. */
export async function storeResetToken(em: EntityManager, email: string, token: string): Promise<void> {
  await runStatement(em, sql`insert into password_reset_tokens (email, token, created_at) values (${email}, ${token}, now())
    on conflict (email) do update set token = excluded.token, created_at = excluded.created_at`);
}

/** Claims (deletes) `email`'s reset secret if it still is `token`: what makes a secret single-use when two resets race. */
export async function claimResetToken(em: EntityManager, email: string, token: string): Promise<boolean> {
  return (await runStatement(em, sql`delete from password_reset_tokens where email = ${email} and token = ${token} returning email`)).length === 1;
}
