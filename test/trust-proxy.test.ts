/**
 * TRUST_PROXY decides the client IP that the auth limits count (CONTRACT 6): 10 failed logins
 * for one email from one client IP within 15 minutes, and the per-IP budget of
 * AUTH_RATE_LIMIT_PER_MINUTE auth operations. With 0 no X-Forwarded-For is believed: the socket
 * address counts, so a client cannot escape a limit by making up addresses. With 1 the one proxy
 * in front is trusted: the address it appends (the last X-Forwarded-For entry) counts, so the
 * clients behind it are told apart, and an address a client writes in front of that is ignored.
 */
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser, uniqueEmail } from './support/factories';
import { awaitWindowRoom } from './support/mailbox';
import { query } from './support/accounts';

const LOGIN = `mutation($email: String!, $password: String!) { login(email: $email, password: $password) { token } }`;
const xff = (value: string) => ({ 'x-forwarded-for': value });
/** Documentation addresses (RFC 5737). */
const A = '203.0.113.7';
const B = '198.51.100.23';

interface Setup {
  app: TestApp;
  api: ReturnType<typeof clients>;
}

function appWith(env: Record<string, string>): Setup {
  const s = {} as Setup;
  beforeAll(async () => {
    s.app = await startTestApp(env);
    s.api = clients(s.app.url);
  });
  afterAll(() => s.app.close());
  return s;
}

async function failLogin(s: Setup, email: string, headers: Record<string, string>) {
  const res = await s.api.rest('POST', '/auth/login', { body: { email, password: 'wrong-password' }, headers });
  expect([res.status, res.body]).toEqual([401, { message: 'Invalid credentials' }]);
}

async function expectLimited(res: { status: number; body: unknown; headers: Headers }, maxRetryAfter: number) {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({ message: 'Too many requests' });
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(maxRetryAfter);
}

/** The addresses under which failed logins for `email` were recorded (rate_attempts keys `login:<email>:<ip>`). */
async function loginAddresses(s: Setup, email: string): Promise<Record<string, number>> {
  const rows = await query<{ key: string; n: string }>(s.app, 'select key, count(*) as n from rate_attempts where key like ? group by key', [`login:${email}:%`]);
  return Object.fromEntries(rows.map((r) => [r.key.slice(`login:${email}:`.length), Number(r.n)]));
}

/** The per-IP budget counters of this minute, by address (rate_limits keys `auth-ip:<ip>`). */
async function budgetAddresses(s: Setup): Promise<Record<string, number>> {
  const rows = await query<{ key: string; count: number }>(s.app, `select key, count from rate_limits where key like 'auth-ip:%' and expires_at > now()`);
  return Object.fromEntries(rows.map((r) => [r.key.slice('auth-ip:'.length), Number(r.count)]));
}

const LOOPBACK = /^(127\.0\.0\.1|::ffff:127\.0\.0\.1)$/;

describe('TRUST_PROXY=0: the socket address counts, X-Forwarded-For is ignored', () => {
  describe('failed logins', () => {
    const s = appWith({ TRUST_PROXY: '0' });

    it('10 failures, each claiming another X-Forwarded-For, are one client: the 11th → 429 with Retry-After even with the right password', async () => {
      const { user, password } = await buildUser(s.app);
      for (let i = 0; i < 10; i++) await failLogin(s, user.email, xff(`192.0.2.${i + 1}`));
      await expectLimited(await s.api.rest('POST', '/auth/login', { body: { email: user.email, password }, headers: xff('192.0.2.200') }), 15 * 60);
      await expectLimited(await s.api.rest('POST', '/auth/login', { body: { email: user.email, password } }), 15 * 60);
      const g = await s.api.gql(LOGIN, { email: user.email, password }, { headers: xff('192.0.2.201, 192.0.2.202') });
      expect(g.errors?.[0]).toMatchObject({ message: 'Too many requests', extensions: { code: 'TOO_MANY_REQUESTS' } });
      const counted = await loginAddresses(s, user.email);
      expect(Object.values(counted)).toEqual([10]);
      expect(Object.keys(counted)[0]).toMatch(LOOPBACK);
    });
  });

  describe('per-IP budget (AUTH_RATE_LIMIT_PER_MINUTE=4)', () => {
    const s = appWith({ TRUST_PROXY: '0', AUTH_RATE_LIMIT_PER_MINUTE: '4' });

    it('rotating X-Forwarded-For does not buy a fresh budget: the 5th auth operation → 429', async () => {
      await awaitWindowRoom(60_000, 15_000);
      const email = uniqueEmail('budget0');
      for (let i = 0; i < 4; i++) await failLogin(s, email, xff(`192.0.2.${i + 1}`));
      await expectLimited(await s.api.rest('POST', '/auth/forgot-password', { body: { email }, headers: xff('192.0.2.99') }), 60);
      const g = await s.api.gql(LOGIN, { email, password: 'wrong-password' }, { headers: xff(B) });
      expect(g.errors?.[0]).toMatchObject({ message: 'Too many requests', extensions: { code: 'TOO_MANY_REQUESTS' } });
      const counted = await budgetAddresses(s);
      expect(Object.keys(counted)).toHaveLength(1);
      expect(Object.keys(counted)[0]).toMatch(LOOPBACK);
    }, 60_000);
  });
});

describe('TRUST_PROXY=1: the address the proxy appends (the last X-Forwarded-For entry) counts', () => {
  describe('failed logins', () => {
    const s = appWith({ TRUST_PROXY: '1' });

    it('10 failures from one forwarded client: that client is limited (whatever it writes in front), another client and the proxy itself are not', async () => {
      const { user, password } = await buildUser(s.app);
      for (let i = 0; i < 10; i++) await failLogin(s, user.email, xff(A));
      expect(await loginAddresses(s, user.email)).toEqual({ [A]: 10 });

      await expectLimited(await s.api.rest('POST', '/auth/login', { body: { email: user.email, password }, headers: xff(A) }), 15 * 60);
      // A client's own X-Forwarded-For arrives with the proxy's entry after it: only the proxy's is believed.
      await expectLimited(await s.api.rest('POST', '/auth/login', { body: { email: user.email, password }, headers: xff(`${B}, ${A}`) }), 15 * 60);
      const g = await s.api.gql(LOGIN, { email: user.email, password }, { headers: xff(A) });
      expect(g.errors?.[0]).toMatchObject({ message: 'Too many requests', extensions: { code: 'TOO_MANY_REQUESTS' } });

      // Another client behind the proxy: its own count, and the right password works.
      expect((await s.api.rest('POST', '/auth/login', { body: { email: user.email, password }, headers: xff(B) })).status).toBe(200);
      expect((await s.api.rest('POST', '/auth/login', { body: { email: user.email, password }, headers: xff(`${A}, ${B}`) })).status).toBe(200);
      expect((await s.api.gql(LOGIN, { email: user.email, password }, { headers: xff(B) })).data).toEqual({ login: { token: expect.any(String) } });
      // No X-Forwarded-For: the socket address is the client.
      expect((await s.api.rest('POST', '/auth/login', { body: { email: user.email, password } })).status).toBe(200);
      expect(await loginAddresses(s, user.email)).toEqual({ [A]: 10 });
    });
  });

  describe('per-IP budget (AUTH_RATE_LIMIT_PER_MINUTE=4)', () => {
    const s = appWith({ TRUST_PROXY: '1', AUTH_RATE_LIMIT_PER_MINUTE: '4' });

    it('each forwarded client has its own budget; the one that spent it → 429, another does not', async () => {
      await awaitWindowRoom(60_000, 15_000);
      const email = uniqueEmail('budget1');
      for (let i = 0; i < 4; i++) await failLogin(s, email, xff(A));
      await expectLimited(await s.api.rest('POST', '/auth/forgot-password', { body: { email }, headers: xff(A) }), 60);
      await expectLimited(await s.api.rest('POST', '/auth/login', { body: { email, password: 'wrong-password' }, headers: xff(`${B}, ${A}`) }), 60);
      const g = await s.api.gql(LOGIN, { email, password: 'wrong-password' }, { headers: xff(A) });
      expect(g.errors?.[0]).toMatchObject({ message: 'Too many requests', extensions: { code: 'TOO_MANY_REQUESTS' } });

      await failLogin(s, email, xff(B));
      expect((await s.api.gql(LOGIN, { email, password: 'wrong-password' }, { headers: xff(B) })).errors?.[0]).toMatchObject({ message: 'Invalid credentials' });
      const counted = await budgetAddresses(s);
      expect(counted).toEqual({ [A]: 7, [B]: 2 });
    }, 60_000);
  });
});
