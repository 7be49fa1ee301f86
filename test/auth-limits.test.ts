import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser, uniqueEmail } from './support/factories';
import { awaitWindowRoom } from './support/mailbox';
import { query } from './support/accounts';
import { loadConfig } from '../src/config/config';
import { hashPassword, setBcryptCost } from '../src/modules/user/password';

const LOGIN = `mutation($email: String!, $password: String!) { login(email: $email, password: $password) { token } }`;
const FORGOT = `mutation($email: String!) { forgotPassword(email: $email) { message } }`;

describe('login throttling: 10 failures per (email, IP) in 15 minutes', () => {
  let app: TestApp;
  let api: ReturnType<typeof clients>;
  beforeAll(async () => {
    app = await startTestApp();
    api = clients(app.url);
    await awaitWindowRoom(15 * 60_000, 30_000);
  }, 60_000);
  afterAll(() => app.close());

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

    // When the window has passed (moved into the past here), the right password works again.
    await query(app, `update rate_limits set window_start = window_start - interval '15 minutes' where key like ?`, [`login:${user.email}:%`]);
    expect((await api.rest('POST', '/auth/login', { body: { email: user.email, password } })).status).toBe(200);
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
