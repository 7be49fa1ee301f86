import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser, uniqueEmail } from './support/factories';
import { awaitWindowRoom } from './support/mailbox';
import { query } from './support/accounts';
import { loadConfig } from '../src/config/config';
import { silentLogger } from '../src/core/logger';
import { hashPassword, setBcryptCost } from '../src/modules/user/password';

const LOGIN = `mutation($email: String!, $password: String!) { login(email: $email, password: $password) { token } }`;
const FORGOT = `mutation($email: String!) { forgotPassword(email: $email) { message } }`;

describe('login throttling: 10 failures per (email, IP) in 15 minutes', () => {
  let app: TestApp;
  let api: ReturnType<typeof clients>;
  beforeAll(async () => {
    app = await startTestApp();
    api = clients(app.url);
  });
  afterAll(() => app.close());

  /** Moves the recorded attempts of matching keys `seconds` into the past, as if that time had gone by. */
  const ageAttempts = (keyPattern: string, seconds: number) =>
    query(app, `update rate_attempts set at = at - make_interval(secs => ?), expires_at = expires_at - make_interval(secs => ?) where key like ?`, [seconds, seconds, keyPattern]);

  const fail = async (email: string, i: number) => {
    if (i % 2) {
      const res = await api.rest('POST', '/auth/login', { body: { email, password: `wrong-${i}` } });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ message: 'Invalid credentials' });
    } else {
      const g = await api.gql(LOGIN, { email, password: `wrong-${i}` });
      expect(g.errors?.[0]).toMatchObject({ message: 'Invalid credentials' });
    }
  };

  it('the 11th attempt → 429 Too many requests with Retry-After, even with the right password, on both surfaces; other emails are unaffected', async () => {
    const { user, password } = await buildUser(app);
    for (let i = 0; i < 10; i++) await fail(user.email, i);
    const res = await api.rest('POST', '/auth/login', { body: { email: user.email.toUpperCase(), password } });
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ message: 'Too many requests' });
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    const g = await api.gql(LOGIN, { email: user.email, password });
    expect(g.errors?.[0]).toMatchObject({ message: 'Too many requests', extensions: { code: 'TOO_MANY_REQUESTS', retryAfter: expect.any(Number) } });

    const other = await buildUser(app);
    expect((await api.rest('POST', '/auth/login', { body: { email: other.user.email, password } })).status).toBe(200);

    // When the window has passed (the failures moved into the past here), the right password works again.
    await ageAttempts(`login:${user.email}:%`, 15 * 60 + 1);
    expect((await api.rest('POST', '/auth/login', { body: { email: user.email, password } })).status).toBe(200);
  });

  it('a parallel burst of 15 wrong passwords for one (email, IP): exactly 10 answer 401 and 5 answer 429; then the right password is 429', async () => {
    const { user, password } = await buildUser(app);
    const results = await Promise.all(
      Array.from({ length: 15 }, (_, i) => api.rest('POST', '/auth/login', { body: { email: user.email, password: `wrong-${i}` } })),
    );
    const rejected = results.filter((r) => r.status === 401);
    const limited = results.filter((r) => r.status === 429);
    expect([rejected.length, limited.length]).toEqual([10, 5]);
    for (const r of rejected) expect(r.body).toEqual({ message: 'Invalid credentials' });
    for (const r of limited) {
      expect(r.body).toEqual({ message: 'Too many requests' });
      expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
    }
    const res = await api.rest('POST', '/auth/login', { body: { email: user.email, password } });
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ message: 'Too many requests' });
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
  });

  it('the window slides: failures 14 minutes old still count, and Retry-After is when the oldest one leaves it', async () => {
    const { user, password } = await buildUser(app);
    for (let i = 0; i < 10; i++) await fail(user.email, i);
    // A fixed 15-minute window would have started afresh in between; a sliding one still holds them.
    await ageAttempts(`login:${user.email}:%`, 14 * 60);
    const res = await api.rest('POST', '/auth/login', { body: { email: user.email, password } });
    expect(res.status).toBe(429);
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(55);
    expect(retryAfter).toBeLessThanOrEqual(60);
    await ageAttempts(`login:${user.email}:%`, 61);
    expect((await api.rest('POST', '/auth/login', { body: { email: user.email, password } })).status).toBe(200);
  });

  it('the cleanup job deletes attempts that left their window, and only those', async () => {
    const email = uniqueEmail('old');
    for (let i = 0; i < 3; i++) await fail(email, i);
    await ageAttempts(`login:${email}:%`, 15 * 60 + 1);
    const fresh = uniqueEmail('fresh');
    await fail(fresh, 1);
    const job = app.built.services.limits.cleanupJob(app.orm, silentLogger);
    await job.runNow();
    const left = await query<{ key: string }>(app, 'select key from rate_attempts where key like ? or key like ?', [`login:${email}:%`, `login:${fresh}:%`]);
    expect(left.map((r) => r.key.split(':')[1])).toEqual([fresh]);
  });

  it('unknown emails count too', async () => {
    const email = uniqueEmail('nobody');
    for (let i = 0; i < 10; i++) await fail(email, i);
    const res = await api.rest('POST', '/auth/login', { body: { email, password: 'whatever1' } });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('nine failures then a success: the count starts again', async () => {
    const { user, password } = await buildUser(app);
    for (let i = 0; i < 9; i++) await fail(user.email, i);
    expect((await api.rest('POST', '/auth/login', { body: { email: user.email, password } })).status).toBe(200);
    for (let i = 0; i < 9; i++) await fail(user.email, i);
    expect((await api.rest('POST', '/auth/login', { body: { email: user.email, password } })).status).toBe(200);
  });
});

describe('per-IP budget on auth operations (AUTH_RATE_LIMIT_PER_MINUTE)', () => {
  let app: TestApp;
  let api: ReturnType<typeof clients>;
  beforeAll(async () => {
    app = await startTestApp({ AUTH_RATE_LIMIT_PER_MINUTE: '6' });
    api = clients(app.url);
  });
  afterAll(() => app.close());

  it('REST and GraphQL auth operations share one budget; past it → 429 with Retry-After; other routes are not counted', async () => {
    await awaitWindowRoom(60_000, 15_000);
    const email = uniqueEmail('budget');
    expect((await api.rest('POST', '/auth/register', { body: {} })).status).toBe(422);
    expect((await api.rest('POST', '/auth/login', { body: { email, password: 'password123' } })).status).toBe(401);
    expect((await api.rest('POST', '/auth/forgot-password', { body: { email } })).status).toBe(200);
    expect((await api.gql(FORGOT, { email })).data).toEqual({ forgotPassword: { message: 'If that email exists, a link was sent.' } });
    expect((await api.rest('GET', '/auth/me')).status).toBe(401);
    expect((await api.gql('{ me { id } }')).data).toEqual({ me: null });
    // Not auth operations: never counted.
    expect((await api.rest('GET', '/healthz')).status).toBe(200);
    expect((await api.rest('GET', '/admin/users')).status).toBe(401);

    const res = await api.rest('POST', '/auth/forgot-password', { body: { email } });
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ message: 'Too many requests' });
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect((await api.gql(LOGIN, { email, password: 'password123' })).errors?.[0]).toMatchObject({ message: 'Too many requests', extensions: { code: 'TOO_MANY_REQUESTS' } });
    expect((await api.rest('POST', '/auth/verify-email/abc')).status).toBe(429);
  }, 60_000);
});

describe('bcrypt cost', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('the default configuration hashes with cost 12, and hashes of any cost verify', async () => {
    const defaults = loadConfig({});
    expect(defaults.bcryptCost).toBe(12);
    setBcryptCost(defaults.bcryptCost);
    let hash: string;
    try {
      hash = await hashPassword('password123');
    } finally {
      setBcryptCost(app.config.bcryptCost);
    }
    expect(hash).toMatch(/^\$2b\$12\$/);
    const { user } = await buildUser(app);
    await query(app, 'update users set password = ? where id = ?', [hash, user.id]);
    const res = await clients(app.url).rest('POST', '/auth/login', { body: { email: user.email, password: 'password123' } });
    expect(res.status).toBe(200);
  });
});
