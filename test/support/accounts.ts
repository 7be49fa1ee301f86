import { createHash } from 'node:crypto';
import type { TestApp } from './harness';

export const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** Raw SQL against the test app's database (inspecting what the service stored). */
export async function query<T = Record<string, unknown>>(app: TestApp, sql: string, params: unknown[] = []): Promise<T[]> {
  return app.orm.em.fork().execute<T[]>(sql, params as never[]);
}

export async function outboxCount(app: TestApp, to: string, subject?: string): Promise<number> {
  const rows = await query<{ n: string }>(
    app,
    `select count(*) as n from mail_outbox where to_address = ?${subject ? ' and subject = ?' : ''}`,
    subject ? [to, subject] : [to],
  );
  return Number(rows[0].n);
}

export const USER_SHAPE = {
  id: expect.any(Number),
  name: expect.any(String),
  email: expect.any(String),
  role: expect.any(String),
  email_verified_at: null,
  created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
  updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
};
