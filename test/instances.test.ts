import { Client } from 'pg';
import { rest } from './support/client';
import { createTestDatabase } from './support/harness';
import { startMailbox, type Mailbox } from './support/mailbox';
import { until } from './support/wait';
import { buildService, removeService, startInstance, stopInstance, type Instance } from './support/instances';

/**
 * Two real instances (two started services, different ports) on one PostgreSQL behave as one
 * service (CONTRACT 15): tokens, throttles, the mail outbox and the periodic jobs.
 */
jest.setTimeout(180_000);

const SECRET = 'instances-test-secret-that-is-long-enough-to-pass';
const PASSWORD = 'password123';
/** Each delivery waits this long before its data: sends are slow enough to kill an instance mid-queue. */
const SMTP_DELAY_MS = 40;
/**
 * The retention job's first run after start (TRASH_RETENTION_FIRST_RUN_MS; a minute by default):
 * past the setup test below, which trashes the posts it must find, with room for a busy machine.
 */
const RETENTION_FIRST_RUN_MS = 15_000;

let databaseUrl: string;
let db: Client;
let mailbox: Mailbox;
let a: Instance;
let b: Instance;
const started = Date.now();

beforeAll(async () => {
  buildService();
  databaseUrl = await createTestDatabase();
  mailbox = await startMailbox(0, { rcptDelayMs: SMTP_DELAY_MS });
  const env = {
    DATABASE_URL: databaseUrl,
    SMTP_URL: mailbox.url,
    JWT_SECRET: SECRET,
    BCRYPT_COST: '4',
    APP_URL: 'http://app.test',
    TRASH_RETENTION_DAYS: '7',
    TRASH_RETENTION_FIRST_RUN_MS: String(RETENTION_FIRST_RUN_MS),
  };
  a = startInstance(env);
  b = startInstance(env);
  await Promise.all([a.ready, b.ready]);
  db = new Client({ connectionString: databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await Promise.all([stopInstance(a), stopInstance(b)]);
  await db?.end();
  await mailbox?.close();
  removeService();
});

/** Every answer 201; otherwise the failure names the answers and what the services logged at error level. */
function expectAll201(answers: { status: number; body: unknown }[]): void {
  if (answers.every((r) => r.status === 201)) return;
  const errors = [a, b].flatMap((i) => i.output().split('\n').filter((l) => /"level":(50|60)/.test(l)));
  throw new Error(`not all 201: ${JSON.stringify(answers.map((r) => [r.status, r.body]))}\nservice errors:\n${errors.join('\n')}`);
}

const register = (on: Instance, email: string) => rest(on.url(), 'POST', '/auth/register', { body: { name: 'Multi', email, password: PASSWORD } });
const login = (on: Instance, email: string, password: string) => rest(on.url(), 'POST', '/auth/login', { body: { email, password } });

/** mailIds each instance logged as sent (one line per accepted SMTP delivery). */
const sentIds = (i: Instance) => i.logs().filter((l) => l.msg === 'mail sent').map((l) => Number(l.mailId));

/**
 * The marker that every send so far is seen: each outbox row marked sent has its `mail sent`
 * line (logged before the mark commits) in the instances' output, read through a pipe.
 */
async function sentLinesRead(): Promise<boolean> {
  const seen = new Set([...sentIds(a), ...sentIds(b)]);
  return (await db.query<{ id: number }>('select id from mail_outbox where sent_at is not null')).rows.every((r) => seen.has(r.id));
}

/**
 * Sends are over, and every one is counted: no row is left unsent (a send in flight keeps its
 * row unsent until its mark commits, and a sent row is never claimed again), and every sent
 * row's log line has been read. After this, no delivery can still arrive.
 */
async function sendsSettled(): Promise<void> {
  await until(async () => (await db.query(`select count(*)::int as n from mail_outbox where sent_at is null`)).rows[0].n === 0, 'an idle outbox', { ms: 30_000 });
  await until(sentLinesRead, 'the log line of every sent mail', { ms: 30_000 });
}

/** The mails each address got, counted at the SMTP sink. */
function deliveries(prefix: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of mailbox.messages) {
    const to = (Array.isArray(m.to) ? m.to : m.to ? [m.to] : []).flatMap((t) => t.value.map((v) => v.address ?? ''));
    for (const addr of to) if (addr.startsWith(prefix)) counts.set(addr, (counts.get(addr) ?? 0) + 1);
  }
  return counts;
}

// Set up first: the retention job's first run comes RETENTION_FIRST_RUN_MS after the instances start.
let expired: number[] = [];
let recent: number;
it('(setup) posts trashed 8 days ago and one trashed now, while both instances run', async () => {
  const res = await register(a, 'retention@example.test');
  expect(res.status).toBe(201);
  const ids: number[] = [];
  for (let i = 0; i < 4; i++) {
    const post = await rest(i % 2 ? b.url() : a.url(), 'POST', '/posts', { token: res.body.token, body: { title: `Old ${i}`, body: 'x' } });
    expect(post.status).toBe(201);
    expect((await rest(i % 2 ? a.url() : b.url(), 'DELETE', `/posts/${post.body.id}`, { token: res.body.token })).status).toBe(200);
    ids.push(post.body.id);
  }
  [recent, ...expired] = ids;
  await db.query(`update posts set deleted_at = now() - interval '8 days' where id = any($1)`, [expired]);
});

it('a token issued by one instance is accepted by the other', async () => {
  const res = await register(a, 'token@example.test');
  expect(res.status).toBe(201);
  const me = await rest(b.url(), 'GET', '/auth/me', { token: res.body.token });
  expect([me.status, me.body]).toEqual([200, res.body.user]);
  const res2 = await login(b, 'token@example.test', PASSWORD);
  expect((await rest(a.url(), 'GET', '/auth/me', { token: res2.body.token })).status).toBe(200);
});

it('10 failed logins split across both instances → 429 on both', async () => {
  const email = 'throttle@example.test';
  expect((await register(b, email)).status).toBe(201);
  for (let i = 0; i < 10; i++) {
    const res = await login(i % 2 ? b : a, email, `wrong-${i}`);
    expect([res.status, res.body]).toEqual([401, { message: 'Invalid credentials' }]);
  }
  for (const on of [a, b]) {
    const res = await login(on, email, PASSWORD);
    expect([res.status, res.body]).toEqual([429, { message: 'Too many requests' }]);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
  }
});

it('40 mails queued through both instances are each delivered exactly once, by both senders between them', async () => {
  // The count below starts from an idle outbox: a mail of an earlier test still on its way would
  // otherwise be counted as one of these (each process loads its SMTP client on its first send).
  await sendsSettled();
  const beforeA = sentIds(a).length;
  const beforeB = sentIds(b).length;
  const emails = Array.from({ length: 40 }, (_, i) => `once-${i}@example.test`);
  const answers = await Promise.all(emails.map((e, i) => register(i % 2 ? b : a, e)));
  expectAll201(answers);
  await until(() => deliveries('once-').size === 40, '40 mails', { ms: 30_000 });
  // A duplicate, were there one, has arrived by now: every send is over and counted.
  await sendsSettled();
  expect([...deliveries('once-').values()]).toEqual(emails.map(() => 1));
  const byA = sentIds(a).slice(beforeA);
  const byB = sentIds(b).slice(beforeB);
  expect(byA.length + byB.length).toBe(40);
  expect(byA.filter((id) => byB.includes(id))).toEqual([]);
  expect(byA.length).toBeGreaterThan(0);
  expect(byB.length).toBeGreaterThan(0);
});

it('the retention job runs once for both instances and purges each expired post once', async () => {
  // Both instances schedule their first run RETENTION_FIRST_RUN_MS after start; one of them claims the period.
  await until(async () => (await db.query('select id from posts where id = any($1)', [expired])).rows.length === 0, 'the retention run', { ms: Math.max(5_000, RETENTION_FIRST_RUN_MS + 30_000 - (Date.now() - started)) });
  // The other instance's first run has come too: it logs that it found the period taken.
  const ran = (i: Instance) => i.logs().some((l) => l.msg === 'trash retention purged posts' || l.msg === 'trash retention skipped: another instance ran it this period');
  await until(() => ran(a) && ran(b), "both instances' first retention run", { ms: 30_000 });
  const left = await db.query('select id from posts where id = any($1)', [[...expired, recent]]);
  expect(left.rows).toEqual([{ id: recent }]);
  const runs = [a, b].flatMap((i) => i.logs().filter((l) => l.msg === 'trash retention purged posts'));
  expect(runs.map((r) => r.purged)).toEqual([expired.length]);
});

it('two purges of the trash at once, one on each instance, count each post once', async () => {
  const mod = await register(a, 'moderator@example.test');
  await db.query(`update users set role = 'moderator' where id = $1`, [mod.body.user.id]);
  const token = mod.body.token as string;
  for (let i = 0; i < 6; i++) {
    const on = i % 2 ? a : b;
    const post = await rest(on.url(), 'POST', '/posts', { token, body: { title: `Purge ${i}`, body: 'x' } });
    expect((await rest(on.url(), 'DELETE', `/posts/${post.body.id}`, { token })).status).toBe(200);
  }
  const inTrash = (await db.query('select count(*)::int as n from posts where deleted_at is not null')).rows[0].n;
  expect(inTrash).toBeGreaterThanOrEqual(6);
  const purges = await Promise.all([a, b].map((on) => rest(on.url(), 'DELETE', '/trash', { token })));
  expect(purges.map((p) => p.status)).toEqual([200, 200]);
  expect(purges[0].body.count + purges[1].body.count).toBe(inTrash);
  expect((await db.query('select count(*)::int as n from posts where deleted_at is not null')).rows[0].n).toBe(0);
});

it('after one instance is killed (SIGKILL) mid-queue, the survivor delivers the rest: each mail once, but the one in flight at the kill', async () => {
  const emails = Array.from({ length: 40 }, (_, i) => `kill-${i}@example.test`);
  const beforeA = sentIds(a).length;
  const answers = await Promise.all(emails.map((e, i) => register(i % 2 ? b : a, e)));
  expectAll201(answers);
  // Every mail is committed to the outbox; A is part-way through its share.
  await until(() => sentIds(a).length >= beforeA + 3, 'A to send some of them', { ms: 30_000 });
  a.child.kill('SIGKILL');
  await a.exited;
  const left = (await db.query(`select count(*)::int as n from mail_outbox where sent_at is null and to_address like 'kill-%'`)).rows[0].n;
  expect(left).toBeGreaterThan(0); // the kill did land mid-queue

  await until(() => deliveries('kill-').size === 40, '40 mails after the kill', { ms: 30_000 });
  await sendsSettled();
  const counts = [...deliveries('kill-').values()];
  expect(counts.every((n) => n >= 1)).toBe(true);
  // The documented window: A may have had its mail accepted by the SMTP server and died before
  // marking it sent. A sends one mail at a time, so at most one mail arrives twice.
  expect(counts.reduce((s, n) => s + n, 0)).toBeLessThanOrEqual(41);
  // The survivor still answers, and a SIGTERM stops it cleanly.
  expect((await rest(b.url(), 'GET', '/readyz')).status).toBe(200);
  b.child.kill('SIGTERM');
  expect(await b.exited).toBe(0);
});
