/**
 * The token cache of src/modules/auth/auth.tokens.ts, one of the performance tricks the service
 * keeps (the others: test/tricks.test.ts, test/tricks-memory.test.ts): a token is verified once
 * (jsonwebtoken's verify is counted), and from the cache it still expires and is still revoked by
 * a password reset or an account deletion, on both surfaces.
 */
import jwt from 'jsonwebtoken';
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser } from './support/factories';
import { resetSecretOf, startMailbox, type Mailbox } from './support/mailbox';
import { until } from './support/wait';

describe('token cache (src/modules/auth/auth.tokens.ts)', () => {
  let app: TestApp;
  let api: ReturnType<typeof clients>;
  let mailbox: Mailbox;
  let verify: jest.SpyInstance;
  const ME = '{ me { id } }';

  beforeAll(async () => {
    mailbox = await startMailbox();
    app = await startTestApp({ SMTP_URL: mailbox.url });
    api = clients(app.url);
  });
  beforeEach(() => {
    verify = jest.spyOn(jwt, 'verify');
  });
  afterEach(() => verify.mockRestore());
  afterAll(async () => {
    await app.close();
    await mailbox.close();
  });

  const expectAccepted = async (token: string, id: number) => {
    const me = await api.rest('GET', '/auth/me', { token });
    expect([me.status, me.body?.id]).toEqual([200, id]);
    expect((await api.gql(ME, {}, { token })).data).toEqual({ me: { id } });
  };
  const expectRefused = async (token: string, message: string) => {
    const me = await api.rest('GET', '/auth/me', { token });
    expect([me.status, me.body]).toEqual([401, { message }]);
    expect((await api.gql(ME, {}, { token })).errors?.[0]).toMatchObject({ message, extensions: { code: 'UNAUTHENTICATED' } });
  };

  it('a token is verified once, then answered from the cache on both surfaces; a bad one is verified (and refused) every time', async () => {
    const { user, password } = await buildUser(app);
    const token = (await api.rest('POST', '/auth/login', { body: { email: user.email, password } })).body.token as string;
    verify.mockClear();
    for (let i = 0; i < 3; i++) await expectAccepted(token, user.id);
    expect(verify).toHaveBeenCalledTimes(1);

    const [head, body] = token.split('.');
    const forged = `${head}.${body}.${Buffer.from('not the signature').toString('base64url')}`;
    verify.mockClear();
    for (let i = 0; i < 2; i++) await expectRefused(forged, 'Invalid token');
    expect(verify).toHaveBeenCalledTimes(4);
  });

  it('a cached token still expires', async () => {
    const { user } = await buildUser(app);
    // Expires at the start of the second after next: accepted now, refused within ~2 s.
    const exp = Math.floor(Date.now() / 1000) + 2;
    const token = jwt.sign({ id: user.id, tv: user.tokenVersion, exp }, app.config.jwtSecret!, { algorithm: 'HS256' });
    verify.mockClear();
    await expectAccepted(token, user.id);
    expect(verify).toHaveBeenCalledTimes(1);
    await until(() => Date.now() > exp * 1000 + 50, "the token's exp to pass", { ms: 5_000 });
    await expectRefused(token, 'Invalid token');
    // Refused from the cache: its exp was checked there, not by a second verify.
    expect(verify).toHaveBeenCalledTimes(1);
  });

  it('a cached token is revoked at once by a password reset (token version) and by deleting the account, on both surfaces', async () => {
    const { user, password } = await buildUser(app);
    const token = (await api.rest('POST', '/auth/login', { body: { email: user.email, password } })).body.token as string;
    verify.mockClear();
    await expectAccepted(token, user.id);

    expect((await api.rest('POST', '/auth/forgot-password', { body: { email: user.email } })).status).toBe(200);
    const [mail] = await mailbox.waitFor(user.email, 'Reset your password');
    expect((await api.rest('POST', '/auth/reset-password', { body: { token: resetSecretOf(mail), password: 'brand-new-pass' } })).status).toBe(200);
    await expectRefused(token, 'Invalid token');
    expect(verify).toHaveBeenCalledTimes(1);

    const fresh = (await api.rest('POST', '/auth/login', { body: { email: user.email, password: 'brand-new-pass' } })).body.token as string;
    await expectAccepted(fresh, user.id);
    const admin = (await buildUser(app, { role: 'admin' })).token;
    expect((await api.rest('DELETE', `/admin/users/${user.id}`, { token: admin })).status).toBe(200);
    await expectRefused(fresh, 'User not found');
  });
});
