import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RequestContext } from '../../core/context';
import { requireActor } from '../../core/context';
import type { Actor } from '../user/user.types';
import type { Config } from '../../config/config';
import { AppError, isUniqueViolation } from '../../core/errors';
import type { RateLimiter } from '../../db/rate-limit';
import { parseInput } from '../../core/validation';
import type { MailService } from '../mail/mail.service';
import { dummyPasswordHash, verifyPassword } from '../user/password';
import { User } from '../user/user.entity';
import { changePasswordInput, forgotPasswordInput, loginInput, MAX_PASSWORD_BYTES, registerInput, resetPasswordInput, updateMeInput } from './auth.inputs';
import { checkPrecondition, type Precondition } from '../../core/etag';
import { changeUnderRowLock, type ReadBack } from '../../core/row-lock';
import { clearLoaders } from '../../core/loaders';
import { currentUserTag } from '../user/user.repository';
import { resetPasswordMail, verifyEmailMail } from './auth.mails';
import { claimResetToken, storeResetToken } from './auth.repository';
import { PasswordResetToken } from './password-reset-token.entity';
import type { TokenService } from './auth.tokens';

export const MESSAGES = {
  forgot: 'If that email exists, a link was sent.',
  reset: 'Password reset successfully',
  verified: 'Email verified',
  passwordChanged: 'Password changed',
  resent: 'Verification email sent',
} as const;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** 10 failed logins per (email, IP) in 15 minutes; 5 reset or verification mails an hour (sliding windows). */
const LOGIN_FAILURES_ALLOWED = 10;
const LOGIN_WINDOW_MS = 15 * MINUTE;
const MAILS_PER_HOUR = 5;

const invalidToken = () => AppError.badRequest('Invalid or expired token');
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

export interface AuthResult {
  user: User;
  token: string;
}

/**
 * Registration, login, password reset and email verification.
 * Every operation first spends the caller's per-IP budget, then parses its raw input, so
 * malformed requests count against the budget too and both surfaces behave alike.
 */
export class AuthService {
  constructor(
    private readonly config: Readonly<Config>,
    private readonly tokens: TokenService,
    private readonly limits: RateLimiter,
    private readonly mail: MailService,
  ) {
    // Made now (at the configured cost), so the first unknown-email login is not the slow one.
    void dummyPasswordHash();
  }

  /** The per-IP budget shared by every auth operation on both surfaces (0 = off). */
  private async spendBudget(ctx: RequestContext): Promise<void> {
    const limit = this.config.authRateLimitPerMinute;
    if (limit <= 0) return;
    const { count, retryAfter } = await this.limits.hit(ctx.em, `auth-ip:${ctx.ip}`, MINUTE);
    if (count > limit) throw AppError.tooManyRequests(retryAfter);
  }

  async me(ctx: RequestContext): Promise<Actor | null> {
    await this.spendBudget(ctx);
    return ctx.actor();
  }

  /** The caller renames themselves. */
  async updateMe<T>(ctx: RequestContext, raw: unknown, pre: Precondition, readBack: ReadBack<User, T>): Promise<T> {
    await this.spendBudget(ctx);
    return this.changeSelf(ctx, pre, async (user, tx) => {
      user.name = parseInput(updateMeInput, raw).name;
      await tx.flush();
      return readBack(tx, user);
    });
  }

  /**
   * A password the caller knows, changed: the token version goes up, so every token issued
   * before (this request's included) stops working, as after a reset, and the answer carries a
   * fresh one. A wrong current password is a failed login for the caller's email and IP (the
   * same `login:<email>:<ip>` key login counts), so this route cannot be used to guess around the
   * login throttle; once that pair is throttled, even the right password answers 429.
   */
  async changePassword(ctx: RequestContext, raw: unknown, pre: Precondition): Promise<AuthResult> {
    await this.spendBudget(ctx);
    let key = '';
    const result = await this.changeSelf(ctx, pre, async (user, tx) => {
      const input = parseInput(changePasswordInput, raw);
      key = `login:${user.email}:${ctx.ip}`;
      // Counted on the request's own EntityManager, outside this transaction: a wrong password
      // rolls the transaction back, and the failure must stay counted.
      const attempt = await this.limits.attempt(ctx.em, key, LOGIN_FAILURES_ALLOWED, LOGIN_WINDOW_MS);
      if (!attempt.allowed) throw AppError.tooManyRequests(attempt.retryAfter);
      if (!(await verifyPassword(input.current_password, user.password))) throw AppError.conflict('current_password', 'Current password is incorrect');
      // The flush bumps the token version (User.onPasswordChange); the token is signed after it.
      await user.setPassword(input.password);
      await tx.flush();
      return { user, token: this.tokens.signAccess(user) };
    });
    await this.limits.clear(ctx.em, key);
    return result;
  }

  /**
   * A change of the caller's own row, under its lock: 401 when the caller is gone (deleted since
   * the token's check), then the precondition (If-Match against the user's current tag), then
   * `change`, in one transaction.
   */
  private async changeSelf<R>(ctx: RequestContext, pre: Precondition, change: (user: User, tx: EntityManager) => Promise<R>): Promise<R> {
    const actor = await requireActor(ctx);
    const answer = await changeUnderRowLock(ctx.em, User, { id: actor.id }, {}, async (user, tx) => {
      if (!user) throw AppError.unauthenticated('User not found');
      await checkPrecondition(pre, () => currentUserTag(tx, user.id));
      return change(user, tx);
    });
    clearLoaders(ctx);
    return answer;
  }

  async register(ctx: RequestContext, raw: unknown): Promise<AuthResult> {
    await this.spendBudget(ctx);
    const input = parseInput(registerInput, raw);
    const em = ctx.em;
    // Soft-deleted accounts keep their email: look them up too.
    const taken = await em.count(User, { email: input.email }, { filters: { softDelete: false } });
    if (taken) throw emailTaken();
    const user = em.create(User, { name: input.name, email: input.email, password: '' } as User);
    await user.setPassword(input.password);
    try {
      await inTransaction(em, async () => {
        await em.flush();
        this.enqueueVerification(em, user);
      });
    } catch (err) {
      // A concurrent registration with the same email won the race.
      if (isUniqueViolation(err, 'users_email_unique')) {
        em.clear();
        throw emailTaken();
      }
      throw err;
    }
    this.mail.kick();
    return { user, token: this.tokens.signAccess(user) };
  }

  async login(ctx: RequestContext, raw: unknown): Promise<AuthResult> {
    await this.spendBudget(ctx);
    const input = parseInput(loginInput, raw);
    const key = `login:${input.email}:${ctx.ip}`;
    // The attempt is recorded before the compare, as a failure until proven otherwise: counting
    // only after a slow compare would let a parallel burst through before any failure is seen.
    const attempt = await this.limits.attempt(ctx.em, key, LOGIN_FAILURES_ALLOWED, LOGIN_WINDOW_MS);
    if (!attempt.allowed) throw AppError.tooManyRequests(attempt.retryAfter);

    const user = await ctx.em.findOne(User, { email: input.email });
    // Unknown emails spend a compare too, so timing does not tell which emails exist. bcrypt reads
    // only 72 bytes, so a longer password cannot be one that was accepted at registration.
    const ok =
      (await verifyPassword(input.password, user?.password ?? (await dummyPasswordHash()))) &&
      user !== null &&
      Buffer.byteLength(input.password, 'utf8') <= MAX_PASSWORD_BYTES;
    if (!ok || !user) throw AppError.unauthenticated('Invalid credentials');
    await this.limits.clear(ctx.em, key);
    return { user, token: this.tokens.signAccess(user) };
  }

  async forgotPassword(ctx: RequestContext, raw: unknown): Promise<string> {
    await this.spendBudget(ctx);
    const { email } = parseInput(forgotPasswordInput, raw);
    const em = ctx.em;
    // Counted for every address, known or not, so the answer and its timing reveal nothing.
    const sent = await this.limits.attempt(em, `reset-mail:${email}`, MAILS_PER_HOUR, HOUR);
    if (!sent.allowed) return MESSAGES.forgot;
    const user = await em.findOne(User, { email });
    if (!user) return MESSAGES.forgot;

    const secret = randomBytes(32).toString('hex');
    await inTransaction(em, async () => {
      // One secret per email: a new one replaces any older one.
      await storeResetToken(em, email, sha256(secret));
      this.mail.enqueue(em, resetPasswordMail(email, this.config.appUrl, secret, this.config.resetTokenTtlMinutes));
      await em.flush();
    });
    this.mail.kick();
    return MESSAGES.forgot;
  }

  async resetPassword(ctx: RequestContext, raw: unknown): Promise<string> {
    await this.spendBudget(ctx);
    const input = parseInput(resetPasswordInput, raw);
    const em = ctx.em;
    const hash = sha256(input.token);
    const record = await em.findOne(PasswordResetToken, { token: hash });
    const ttlMs = this.config.resetTokenTtlMinutes * MINUTE;
    if (!record || record.createdAt.getTime() + ttlMs <= Date.now()) throw invalidToken();
    const user = await em.findOne(User, { email: record.email });
    if (!user) throw AppError.badRequest('User not found');

    await user.setPassword(input.password);
    await inTransaction(em, async () => {
      if (!(await claimResetToken(em, record.email, hash))) throw invalidToken();
      await em.flush();
    });
    return MESSAGES.reset;
  }

  async verifyEmail(ctx: RequestContext, token: string): Promise<string> {
    await this.spendBudget(ctx);
    const id = this.tokens.verifyEmailToken(token);
    if (id === null) throw invalidToken();
    const user = await ctx.em.findOne(User, { id });
    if (!user) throw AppError.notFound('User not found');
    if (!user.emailVerifiedAt) {
      // Conditional update: when two verifications race, the first timestamp stays.
      const now = new Date();
      await ctx.em.nativeUpdate(User, { id, emailVerifiedAt: null }, { emailVerifiedAt: now, updatedAt: now });
    }
    return MESSAGES.verified;
  }

  async resendVerification(ctx: RequestContext): Promise<string> {
    await this.spendBudget(ctx);
    const user = await requireActor(ctx);
    if (user.emailVerifiedAt) return MESSAGES.resent;
    const sent = await this.limits.attempt(ctx.em, `verify-mail:${user.id}`, MAILS_PER_HOUR, HOUR);
    if (!sent.allowed) throw AppError.tooManyRequests(sent.retryAfter);
    this.enqueueVerification(ctx.em, user);
    await ctx.em.flush();
    this.mail.kick();
    return MESSAGES.resent;
  }

  private enqueueVerification(em: EntityManager, user: Pick<User, 'id' | 'email'>): void {
    this.mail.enqueue(em, verifyEmailMail(user.email, this.config.appUrl, this.tokens.signVerifyEmail(user)));
  }
}

function emailTaken(): AppError {
  return AppError.conflict('email', 'Email already taken');
}

/** Runs `fn` in a transaction on the request's own EntityManager (its flushes join it). */
async function inTransaction(em: EntityManager, fn: () => Promise<void>): Promise<void> {
  await em.begin();
  try {
    await fn();
    await em.commit();
  } catch (err) {
    await em.rollback();
    throw err;
  }
}
