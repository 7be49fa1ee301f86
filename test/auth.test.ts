import jwt from 'jsonwebtoken';
import { startTestApp, type TestApp } from './support/harness';
import { clients } from './support/client';
import { buildUser, uniqueEmail } from './support/factories';
import { startMailbox, resetSecretOf, verifyTokenOf, type Mailbox } from './support/mailbox';
import { outboxCount, query, sha256, USER_SHAPE } from './support/accounts';
import { User } from '../src/modules/user/user.entity';
import { until } from './support/wait';

let app: TestApp;
let mailbox: Mailbox;
let api: ReturnType<typeof clients>;

beforeAll(async () => {
  mailbox = await startMailbox();
  app = await startTestApp({ SMTP_URL: mailbox.url });
  api = clients(app.url);
});
afterAll(async () => {
  await app.close();
  await mailbox.close();
});

const REGISTER = `mutation($name: String!, $email: String!, $password: String!) {
  register(name: $name, email: $email, password: $password) { token user { id name email role emailVerifiedAt createdAt updatedAt } } }`;
const LOGIN = `mutation($email: String!, $password: String!) { login(email: $email, password: $password) { token user { id email } } }`;
const FORGOT = `mutation($email: String!) { forgotPassword(email: $email) { message } }`;
const RESET = `mutation($token: String!, $password: String!) { resetPassword(token: $token, password: $password) { message } }`;
const VERIFY = `mutation($token: String!) { verifyEmail(token: $token) { message } }`;
const RESEND = `mutation { resendVerification { message } }`;

async function forgotAndReadSecret(email: string, via: 'rest' | 'gql' = 'rest'): Promise<string> {
  const before = mailbox.to(email, 'Reset your password').length;
  if (via === 'rest') expect((await api.rest('POST', '/auth/forgot-password', { body: { email } })).status).toBe(200);
  else expect((await api.gql(FORGOT, { email })).data).toEqual({ forgotPassword: { message: 'If that email exists, a link was sent.' } });
  const mails = await mailbox.waitFor(email, 'Reset your password', before + 1);
  return resetSecretOf(mails[mails.length - 1]);
}

describe('POST /auth/register and mutation register', () => {
  it('REST: 201 {user, token}; email trimmed and lower-cased; role never from the body; a verification mail is sent', async () => {
    const email = uniqueEmail('reg');
    const res = await api.rest('POST', '/auth/register', {
      body: { name: '  Ada  ', email: `  ${email.toUpperCase()} `, password: 'correct horse', role: 'admin', id: 7 },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ user: { ...USER_SHAPE, name: 'Ada', email, role: 'user' }, token: expect.any(String) });
    expect(res.text).not.toContain('password');

    const me = await api.rest('GET', '/auth/me', { token: res.body.token });
    expect(me.status).toBe(200);
    expect(me.body).toEqual(res.body.user);

    const [mail] = await mailbox.waitFor(email, 'Verify your email');
    const token = verifyTokenOf(mail);
    expect(mail.text).toContain(`http://app.test/verify-email#token=${token}`);
    expect(jwt.decode(token)).toMatchObject({ id: res.body.user.id, purpose: 'verify-email' });
    const stored = await query<{ password: string }>(app, 'select password from users where id = ?', [res.body.user.id]);
    expect(stored[0].password).toMatch(/^\$2b\$04\$/);
  });

  it('GraphQL: AuthPayload with the same user; the token authenticates', async () => {
    const email = uniqueEmail('greg');
    const g = await api.gql(REGISTER, { name: 'Grace', email, password: 'password123' });
    expect(g.errors).toBeUndefined();
    expect(g.data.register.user).toEqual({
      id: expect.any(Number), name: 'Grace', email, role: 'user', emailVerifiedAt: null,
      createdAt: expect.any(String), updatedAt: expect.any(String),
    });
    const me = await api.gql('{ me { id } }', undefined, { token: g.data.register.token });
    expect(me.data).toEqual({ me: { id: g.data.register.user.id } });
    await mailbox.waitFor(email, 'Verify your email');
  });

  it('an email already taken (any case) → 422 Email already taken with the field error, on both surfaces', async () => {
    const { user } = await buildUser(app);
    const res = await api.rest('POST', '/auth/register', { body: { name: 'X', email: user.email.toUpperCase(), password: 'password123' } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ message: 'Email already taken', errors: [{ field: 'email', message: 'Email already taken' }] });
    const g = await api.gql(REGISTER, { name: 'X', email: user.email, password: 'password123' });
    expect(g.data).toBeNull();
    expect(g.errors?.[0]).toMatchObject({
      message: 'Email already taken',
      extensions: { code: 'BAD_USER_INPUT', errors: [{ field: 'email', message: 'Email already taken' }] },
    });
  });

  it('concurrent registrations with one email → exactly one 201, the rest 422, never 500', async () => {
    const email = uniqueEmail('race');
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => api.rest('POST', '/auth/register', { body: { name: `R${i}`, email, password: 'password123' } })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 422, 422, 422, 422, 422, 422, 422]);
    for (const r of results.filter((x) => x.status === 422)) expect(r.body.message).toBe('Email already taken');
    expect(await query(app, 'select id from users where email = ?', [email])).toHaveLength(1);
  });

  it('input rules: every problem listed; passwords counted in UTF-8 bytes (8..72), never truncated', async () => {
    const missing = await api.rest('POST', '/auth/register', { body: {} });
    expect(missing.status).toBe(422);
    expect(missing.body).toEqual({
      message: 'Validation failed',
      errors: [
        { field: 'name', message: 'name is required' },
        { field: 'email', message: 'email is required' },
        { field: 'password', message: 'password is required' },
      ],
    });
    const bad = await api.rest('POST', '/auth/register', { body: { name: '   ', email: 'not-an-email', password: 'short' } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([
      { field: 'name', message: 'name is required' },
      { field: 'email', message: 'email must be a valid email address' },
      { field: 'password', message: 'password must be at least 8 bytes' },
    ]);
    const types = await api.rest('POST', '/auth/register', { body: { name: 5, email: [], password: null } });
    expect(types.status).toBe(422);
    expect(types.body.errors.map((e: { field: string }) => e.field)).toEqual(['name', 'email', 'password']);
    // One message per mistake: an empty array has a length, but zod's length checks must not add "is required" to "must be a string".
    const arrays = await api.rest('POST', '/auth/register', { body: { name: [], email: [], password: [] } });
    expect([arrays.status, arrays.body.errors]).toEqual([
      422,
      [
        { field: 'name', message: 'name must be a string' },
        { field: 'email', message: 'email must be a string' },
        { field: 'password', message: 'password must be a string' },
      ],
    ]);
    const notObject = await api.rest('POST', '/auth/register', { body: ['a'] });
    expect(notObject.status).toBe(422);
    expect(notObject.body.errors).toEqual([{ field: null, message: 'Body must be a JSON object' }]);
    const longEmail = await api.rest('POST', '/auth/register', { body: { name: 'A', email: `${'a'.repeat(250)}@x.test`, password: 'password123' } });
    expect(longEmail.body.errors).toEqual([{ field: 'email', message: 'email must be at most 255 characters' }]);
    const longName = await api.rest('POST', '/auth/register', { body: { name: 'n'.repeat(256), email: uniqueEmail(), password: 'password123' } });
    expect(longName.body.errors).toEqual([{ field: 'name', message: 'name must be at most 255 characters' }]);

    // 37 × "é" is 37 characters but 74 bytes: refused. 72 ASCII bytes: accepted.
    const tooLong = await api.rest('POST', '/auth/register', { body: { name: 'A', email: uniqueEmail(), password: 'é'.repeat(37) } });
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.errors).toEqual([{ field: 'password', message: 'password must be at most 72 bytes (UTF-8)' }]);
    const g = await api.gql(REGISTER, { name: 'A', email: uniqueEmail(), password: 'é'.repeat(37) });
    expect(g.errors?.[0]).toMatchObject({ message: 'Validation failed', extensions: { code: 'BAD_USER_INPUT', errors: [{ field: 'password' }] } });
    const email = uniqueEmail('max');
    const max = await api.rest('POST', '/auth/register', { body: { name: 'A', email, password: 'p'.repeat(72) } });
    expect(max.status).toBe(201);
    // Four 2-byte characters are 8 bytes: the minimum.
    expect((await api.rest('POST', '/auth/register', { body: { name: 'A', email: uniqueEmail(), password: 'éééé' } })).status).toBe(201);
  });
});

describe('passwords are hashed by the entity, whatever path sets them', () => {
  const BCRYPT_4 = /^\$2b\$04\$[./A-Za-z0-9]{53}$/;

  it('a user created through the ORM with a plain password is stored as a bcrypt hash and can log in', async () => {
    const em = app.orm.em.fork();
    const email = uniqueEmail('orm');
    const user = em.create(User, { name: 'Orm', email, password: 'plain-password-1' } as User);
    await em.flush();
    const [row] = await query<{ password: string }>(app, 'select password from users where id = ?', [user.id]);
    expect(row.password).toMatch(BCRYPT_4);
    expect(user.password).toBe(row.password);
    const res = await api.rest('POST', '/auth/login', { body: { email, password: 'plain-password-1' } });
    expect(res.status).toBe(200);
    expect(res.body.user.id).toBe(user.id);
  });

  it('assigning a plain password to a loaded user stores its hash and revokes the older tokens', async () => {
    const { user, token } = await buildUser(app);
    const em = app.orm.em.fork();
    const loaded = await em.findOneOrFail(User, { id: user.id });
    loaded.password = 'assigned-password';
    await em.flush();
    const [row] = await query<{ password: string }>(app, 'select password from users where id = ?', [user.id]);
    expect(row.password).toMatch(BCRYPT_4);
    expect((await api.rest('GET', '/auth/me', { token })).body).toEqual({ message: 'Invalid token' });
    expect((await api.rest('POST', '/auth/login', { body: { email: user.email, password: 'password123' } })).status).toBe(401);
    expect((await api.rest('POST', '/auth/login', { body: { email: user.email, password: 'assigned-password' } })).status).toBe(200);
  });

  it('an update that leaves the password alone keeps the hash and the tokens', async () => {
    const { user, token } = await buildUser(app);
    const [before] = await query<{ password: string }>(app, 'select password from users where id = ?', [user.id]);
    const em = app.orm.em.fork();
    const loaded = await em.findOneOrFail(User, { id: user.id });
    loaded.name = 'Renamed';
    await em.flush();
    expect(await query(app, 'select password, name from users where id = ?', [user.id])).toEqual([{ password: before.password, name: 'Renamed' }]);
    expect((await api.rest('GET', '/auth/me', { token })).status).toBe(200);
  });
});

describe('POST /auth/login and mutation login', () => {
  it('right password → 200 {user, token}; email matched case-insensitively', async () => {
    const { user } = await buildUser(app, { name: 'Lin' });
    const res = await api.rest('POST', '/auth/login', { body: { email: `  ${user.email.toUpperCase()}`, password: 'password123' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ user: { ...USER_SHAPE, id: user.id, name: 'Lin', email: user.email, role: 'user' }, token: expect.any(String) });
    expect((await api.rest('GET', '/auth/me', { token: res.body.token })).body.id).toBe(user.id);
    const g = await api.gql(LOGIN, { email: user.email, password: 'password123' });
    expect(g.data.login.user).toEqual({ id: user.id, email: user.email });
  });

  it('wrong password, unknown email, or a longer password that starts with the right 72 bytes → 401 Invalid credentials', async () => {
    const { user } = await buildUser(app);
    for (const body of [
      { email: user.email, password: 'wrong-password' },
      { email: uniqueEmail('nobody'), password: 'password123' },
    ]) {
      const res = await api.rest('POST', '/auth/login', { body });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ message: 'Invalid credentials' });
      const g = await api.gql(LOGIN, body);
      expect(g.errors?.[0]).toMatchObject({ message: 'Invalid credentials', extensions: { code: 'UNAUTHENTICATED' } });
    }
    const email = uniqueEmail('long');
    const password = 'x'.repeat(72);
    expect((await api.rest('POST', '/auth/register', { body: { name: 'L', email, password } })).status).toBe(201);
    expect((await api.rest('POST', '/auth/login', { body: { email, password } })).status).toBe(200);
    const longer = await api.rest('POST', '/auth/login', { body: { email, password: password + 'yz' } });
    expect(longer.status).toBe(401);
    expect(longer.body).toEqual({ message: 'Invalid credentials' });
  });

  it('a bearer token accepted before is refused once its exp has passed, on both surfaces', async () => {
    const { user } = await buildUser(app);
    // Expires at the start of the second after next: accepted now, refused within ~2 s.
    const exp = Math.floor(Date.now() / 1000) + 2;
    const token = jwt.sign({ id: user.id, tv: user.tokenVersion, exp }, app.config.jwtSecret!, { algorithm: 'HS256' });
    expect((await api.rest('GET', '/auth/me', { token })).status).toBe(200);
    expect((await api.gql('{ me { id } }', {}, { token })).data.me.id).toBe(user.id);
    await until(() => Math.floor(Date.now() / 1000) >= exp, "the clock to reach the token's exp", { ms: 5_000 });
    const rest = await api.rest('GET', '/auth/me', { token });
    expect([rest.status, rest.body]).toEqual([401, { message: 'Invalid token' }]);
    expect((await api.gql('{ me { id } }', {}, { token })).errors?.[0]).toMatchObject({ message: 'Invalid token', extensions: { code: 'UNAUTHENTICATED' } });
  });

  it('a missing field → 422', async () => {
    const res = await api.rest('POST', '/auth/login', { body: { email: 'a@b.test' } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ message: 'Validation failed', errors: [{ field: 'password', message: 'password is required' }] });
  });
});

describe('password reset', () => {
  it('REST: the mail carries a 64-hex secret and link; the table stores its SHA-256; reset works once and revokes older tokens at once', async () => {
    const { user, token: oldToken } = await buildUser(app);
    const res = await api.rest('POST', '/auth/forgot-password', { body: { email: user.email.toUpperCase() } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'If that email exists, a link was sent.' });
    const [mail] = await mailbox.waitFor(user.email, 'Reset your password');
    const secret = resetSecretOf(mail);
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    expect(mail.text).toContain(`http://app.test/reset-password#token=${secret}`);

    const rows = await query<{ token: string }>(app, 'select token from password_reset_tokens where email = ?', [user.email]);
    expect(rows).toEqual([{ token: sha256(secret) }]);
    expect(rows[0].token).not.toBe(secret);

    // A token issued just before the reset dies with it too (the same-second case has its own test).
    const login = await api.rest('POST', '/auth/login', { body: { email: user.email, password: 'password123' } });
    const reset = await api.rest('POST', '/auth/reset-password', { body: { token: secret, password: 'brand-new-pass' } });
    expect(reset.status).toBe(200);
    expect(reset.body).toEqual({ message: 'Password reset successfully' });
    for (const t of [oldToken, login.body.token]) {
      const me = await api.rest('GET', '/auth/me', { token: t });
      expect(me.status).toBe(401);
      expect(me.body).toEqual({ message: 'Invalid token' });
    }
    expect(await query(app, 'select * from password_reset_tokens where email = ?', [user.email])).toEqual([]);
    expect((await api.rest('POST', '/auth/login', { body: { email: user.email, password: 'password123' } })).status).toBe(401);
    expect((await api.rest('POST', '/auth/login', { body: { email: user.email, password: 'brand-new-pass' } })).status).toBe(200);

    const again = await api.rest('POST', '/auth/reset-password', { body: { token: secret, password: 'another-pass' } });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ message: 'Invalid or expired token' });
  });

  it('an old token fails after a reset, even one issued in the very second the reset completed', async () => {
    // A revocation by timestamp (iat < password change, in whole seconds) would let this token
    // through; the token version must not. The scenario is only valid if login and reset share
    // one second, so it is retried (bounded) until they do.
    for (let attempt = 1; ; attempt++) {
      const { user } = await buildUser(app);
      const secret = await forgotAndReadSecret(user.email);
      const second = Math.floor(Date.now() / 1000);
      await until(() => Math.floor(Date.now() / 1000) > second, 'the top of the next second', { ms: 2_000, everyMs: 1 });
      const login = await api.rest('POST', '/auth/login', { body: { email: user.email, password: 'password123' } });
      expect(login.status).toBe(200);
      const started = Date.now();
      const reset = await api.rest('POST', '/auth/reset-password', { body: { token: secret, password: 'brand-new-pass' } });
      const finished = Date.now();
      expect(reset.body).toEqual({ message: 'Password reset successfully' });
      const iat = (jwt.decode(login.body.token) as jwt.JwtPayload).iat;
      // The reset completed between `started` and `finished`: both in the token's second.
      if (Math.floor(started / 1000) !== iat || Math.floor(finished / 1000) !== iat) {
        if (attempt < 5) continue;
        throw new Error(`login and reset never fitted in one second in ${attempt} tries`);
      }
      const me = await api.rest('GET', '/auth/me', { token: login.body.token });
      expect(me.status).toBe(401);
      expect(me.body).toEqual({ message: 'Invalid token' });
      return;
    }
  });

  it('two resets racing with one secret: exactly one succeeds', async () => {
    const { user } = await buildUser(app);
    const secret = await forgotAndReadSecret(user.email);
    const results = await Promise.all(
      ['password-one', 'password-two', 'password-three'].map((password) => api.rest('POST', '/auth/reset-password', { body: { token: secret, password } })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400]);
    for (const r of results.filter((x) => x.status === 400)) expect(r.body).toEqual({ message: 'Invalid or expired token' });
  });

  it('GraphQL: forgotPassword and resetPassword; errors are BAD_USER_INPUT', async () => {
    const { user } = await buildUser(app);
    const secret = await forgotAndReadSecret(user.email, 'gql');
    expect((await api.gql(RESET, { token: secret, password: 'via-graphql' })).data).toEqual({ resetPassword: { message: 'Password reset successfully' } });
    const again = await api.gql(RESET, { token: secret, password: 'via-graphql' });
    expect(again.errors?.[0]).toMatchObject({ message: 'Invalid or expired token', extensions: { code: 'BAD_USER_INPUT' } });
    expect((await api.gql(LOGIN, { email: user.email, password: 'via-graphql' })).data.login.user.id).toBe(user.id);
  });

  it('an unknown email gets the same answer and no mail', async () => {
    const email = uniqueEmail('ghost');
    const res = await api.rest('POST', '/auth/forgot-password', { body: { email } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'If that email exists, a link was sent.' });
    expect((await api.gql(FORGOT, { email })).data).toEqual({ forgotPassword: { message: 'If that email exists, a link was sent.' } });
    expect(await outboxCount(app, email)).toBe(0);
    expect(await query(app, 'select * from password_reset_tokens where email = ?', [email])).toEqual([]);
  });

  it('a new request replaces the older secret', async () => {
    const { user } = await buildUser(app);
    const first = await forgotAndReadSecret(user.email);
    const second = await forgotAndReadSecret(user.email);
    expect(second).not.toBe(first);
    const old = await api.rest('POST', '/auth/reset-password', { body: { token: first, password: 'password456' } });
    expect(old.status).toBe(400);
    expect(old.body).toEqual({ message: 'Invalid or expired token' });
    expect((await api.rest('POST', '/auth/reset-password', { body: { token: second, password: 'password456' } })).status).toBe(200);
  });

  it('a secret older than RESET_TOKEN_TTL_MINUTES → 400 Invalid or expired token', async () => {
    const { user } = await buildUser(app);
    const secret = await forgotAndReadSecret(user.email);
    await query(app, `update password_reset_tokens set created_at = now() - interval '61 minutes' where email = ?`, [user.email]);
    const res = await api.rest('POST', '/auth/reset-password', { body: { token: secret, password: 'password456' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'Invalid or expired token' });
  });

  it('a record whose email has no user → 400 User not found; a bad new password → 422 and the secret survives', async () => {
    const secret = 'a'.repeat(64);
    await query(app, 'insert into password_reset_tokens (email, token) values (?, ?)', [uniqueEmail('gone'), sha256(secret)]);
    const res = await api.rest('POST', '/auth/reset-password', { body: { token: secret, password: 'password456' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'User not found' });

    const { user } = await buildUser(app);
    const real = await forgotAndReadSecret(user.email);
    const weak = await api.rest('POST', '/auth/reset-password', { body: { token: real, password: 'short' } });
    expect(weak.status).toBe(422);
    expect(weak.body).toEqual({ message: 'Validation failed', errors: [{ field: 'password', message: 'password must be at least 8 bytes' }] });
    expect((await api.rest('POST', '/auth/reset-password', { body: { token: real, password: 'long-enough' } })).status).toBe(200);
    const missing = await api.rest('POST', '/auth/reset-password', { body: {} });
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toEqual([
      { field: 'token', message: 'token is required' },
      { field: 'password', message: 'password is required' },
    ]);
  });

  it('at most 5 reset mails per address an hour: extra requests answer 200, send nothing and delete nothing', async () => {
    const { user } = await buildUser(app);
    for (let i = 0; i < 7; i++) {
      const res = await api.rest('POST', '/auth/forgot-password', { body: { email: user.email } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ message: 'If that email exists, a link was sent.' });
    }
    const mails = await mailbox.waitFor(user.email, 'Reset your password', 5);
    expect(await outboxCount(app, user.email, 'Reset your password')).toBe(5);
    // The fifth secret is still the live one: the sixth and seventh requests deleted nothing.
    const fifth = resetSecretOf(mails[4]);
    expect((await query<{ token: string }>(app, 'select token from password_reset_tokens where email = ?', [user.email]))[0].token).toBe(sha256(fifth));
    expect((await api.rest('POST', '/auth/reset-password', { body: { token: fifth, password: 'password456' } })).status).toBe(200);
    expect(mailbox.to(user.email, 'Reset your password')).toHaveLength(5);
  });
});

describe('email verification', () => {
  it('REST: the mailed token verifies; again → 200 with the first timestamp kept', async () => {
    const email = uniqueEmail('ver');
    const reg = await api.rest('POST', '/auth/register', { body: { name: 'V', email, password: 'password123' } });
    const token = verifyTokenOf((await mailbox.waitFor(email, 'Verify your email'))[0]);
    const res = await api.rest('POST', `/auth/verify-email/${token}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'Email verified' });
    const first = (await api.rest('GET', '/auth/me', { token: reg.body.token })).body.email_verified_at;
    expect(first).toEqual(expect.stringMatching(/^\d{4}-/));
    await until(() => Date.now() > Date.parse(first) + 1, 'the clock to move past the first verification', { everyMs: 1 });
    expect((await api.rest('POST', `/auth/verify-email/${token}`)).body).toEqual({ message: 'Email verified' });
    expect((await api.rest('GET', '/auth/me', { token: reg.body.token })).body.email_verified_at).toBe(first);
  });

  it('GraphQL verifyEmail', async () => {
    const { user } = await buildUser(app);
    const token = app.built.services.tokens.signVerifyEmail(user);
    expect((await api.gql(VERIFY, { token })).data).toEqual({ verifyEmail: { message: 'Email verified' } });
    const bad = await api.gql(VERIFY, { token: 'garbage' });
    expect(bad.errors?.[0]).toMatchObject({ message: 'Invalid or expired token', extensions: { code: 'BAD_USER_INPUT' } });
    const ghost = jwt.sign({ id: 999_999, purpose: 'verify-email' }, app.config.jwtSecret!, { algorithm: 'HS256', expiresIn: '24h' });
    expect((await api.gql(VERIFY, { token: ghost })).errors?.[0]).toMatchObject({ message: 'User not found', extensions: { code: 'NOT_FOUND' } });
  });

  it('invalid, expired or wrong-purpose tokens → 400; a valid token for no user → 404 User not found', async () => {
    const { user, token: access } = await buildUser(app);
    const secret = app.config.jwtSecret!;
    const expired = jwt.sign({ id: user.id, purpose: 'verify-email', exp: Math.floor(Date.now() / 1000) - 10 }, secret, { algorithm: 'HS256' });
    const otherKey = jwt.sign({ id: user.id, purpose: 'verify-email' }, 'another-secret-of-at-least-32-characters', { algorithm: 'HS256' });
    for (const t of ['garbage', access, expired, otherKey]) {
      const res = await api.rest('POST', `/auth/verify-email/${t}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: 'Invalid or expired token' });
    }
    const ghost = jwt.sign({ id: 999_999, purpose: 'verify-email' }, secret, { algorithm: 'HS256', expiresIn: '24h' });
    const res = await api.rest('POST', `/auth/verify-email/${ghost}`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'User not found' });
    expect((await query(app, 'select email_verified_at from users where id = ?', [user.id]))[0]).toEqual({ email_verified_at: null });
  });

  it('a verification token is not a bearer token', async () => {
    const { user } = await buildUser(app);
    const res = await api.rest('GET', '/auth/me', { token: app.built.services.tokens.signVerifyEmail(user) });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: 'Invalid token' });
  });
});

describe('POST /auth/resend-verification and mutation resendVerification', () => {
  it('anonymous → 401 Unauthenticated', async () => {
    const res = await api.rest('POST', '/auth/resend-verification');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: 'Unauthenticated' });
    expect((await api.gql(RESEND)).errors?.[0]).toMatchObject({ message: 'Unauthenticated', extensions: { code: 'UNAUTHENTICATED' } });
  });

  it('unverified → 200 and a mail whose token verifies; at most 5 an hour, then 429', async () => {
    const { user, token } = await buildUser(app);
    for (let i = 0; i < 5; i++) {
      const res = i % 2 ? await api.rest('POST', '/auth/resend-verification', { token }) : null;
      if (res) {
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ message: 'Verification email sent' });
      } else {
        expect((await api.gql(RESEND, undefined, { token })).data).toEqual({ resendVerification: { message: 'Verification email sent' } });
      }
    }
    const mails = await mailbox.waitFor(user.email, 'Verify your email', 5);
    const sixth = await api.rest('POST', '/auth/resend-verification', { token });
    expect(sixth.status).toBe(429);
    expect(sixth.body).toEqual({ message: 'Too many requests' });
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await api.gql(RESEND, undefined, { token })).errors?.[0]).toMatchObject({ message: 'Too many requests', extensions: { code: 'TOO_MANY_REQUESTS' } });
    expect(await outboxCount(app, user.email, 'Verify your email')).toBe(5);
    expect((await api.rest('POST', `/auth/verify-email/${verifyTokenOf(mails[4])}`)).status).toBe(200);
  });

  it('already verified → 200 and nothing sent', async () => {
    const { user, token } = await buildUser(app, { verified: true });
    const res = await api.rest('POST', '/auth/resend-verification', { token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'Verification email sent' });
    expect(await outboxCount(app, user.email)).toBe(0);
  });
});
