import { createSecretKey, type KeyObject } from 'node:crypto';
import type { ReadContext } from '../../core/context';
import { AppError } from '../../core/errors';
import { onFirstUse } from '../../core/lazy';
import type { User } from '../user/user.entity';
import { actorById } from '../user/user.repository';
import type { Actor } from '../user/user.types';

/**
 * Access tokens: HS256 JWT `{id, tv}` for 7 days (`tv` is the user's token version, bumped by a
 * password change, so older tokens stop working at once). Verification tokens carry
 * `purpose: "verify-email"` and are refused as bearer tokens; access tokens are refused by
 * verify-email. Only HS256 verifies: `alg: none` and every other algorithm are rejected, and
 * so is a token without `exp`.
 */
const ALGORITHM = 'HS256' as const;
const ACCESS_TOKEN_TTL = '7d';
const VERIFY_TOKEN_TTL = '24h';
const VERIFY_PURPOSE = 'verify-email';
/** How many verified tokens TokenService keeps (a few hundred bytes each). */
const MAX_VERIFIED = 10_000;

type Claims = Record<string, unknown> & { exp: number };

/** jsonwebtoken, loaded on the first token signed or checked (core/lazy.ts): anonymous reads need none. */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
const jwt = onFirstUse(() => require('jsonwebtoken') as typeof import('jsonwebtoken'));

export class TokenService {
  /**
   * A secret KeyObject made once: given the string, jsonwebtoken first tries to read it as a PEM
   * public key on every sign and verify, about 0.7 ms of CPU each (12 µs with the KeyObject).
   */
  private secret: KeyObject;

  constructor(secret: string) {
    this.secret = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  /**
   * Signs with a new secret from now on: every token signed before is refused. The test server's
   * reset uses it, since ids restart at 1 there and an older token would otherwise name the new
   * holder of its id.
   */
  replaceSecret(secret: string): void {
    this.secret = createSecretKey(Buffer.from(secret, 'utf8'));
    this.verified.clear();
  }

  signAccess(user: Pick<User, 'id' | 'tokenVersion'>): string {
    return jwt().sign({ id: user.id, tv: user.tokenVersion }, this.secret, { algorithm: ALGORITHM, expiresIn: ACCESS_TOKEN_TTL });
  }

  signVerifyEmail(user: Pick<User, 'id'>): string {
    return jwt().sign({ id: user.id, purpose: VERIFY_PURPOSE }, this.secret, { algorithm: ALGORITHM, expiresIn: VERIFY_TOKEN_TTL });
  }

  /**
   * Tokens whose signature has been checked, with their claims. A client sends the same token
   * with every request, and jsonwebtoken's verify (two decodes, an HMAC, the claim checks) was a
   * tenth of an authenticated read's Node CPU (npm run bench, the admin list). Only tokens this
   * service signed get in, at most MAX_VERIFIED of them; `exp` is checked again on every use, and
   * revocation is the token version, which `authenticate` reads from the database every time.
   */
  private readonly verified = new Map<string, Claims>();

  private verify(token: string): Claims | null {
    const known = this.verified.get(token);
    if (known) return Math.floor(Date.now() / 1000) < known.exp ? known : null;
    let payload: unknown;
    try {
      payload = jwt().verify(token, this.secret, { algorithms: [ALGORITHM] });
    } catch {
      return null;
    }
    // jsonwebtoken accepts a token without `exp` as never expiring; every token this service
    // signs has one, so one without it was not made here to last 7 days (or 24 h).
    if (typeof payload !== 'object' || payload === null || typeof (payload as Claims).exp !== 'number') return null;
    if (this.verified.size >= MAX_VERIFIED) this.verified.clear();
    this.verified.set(token, payload as Claims);
    return payload as Claims;
  }

  /** When a token that checked out expires (seconds since the epoch): a WebSocket connection lives no longer. */
  expiryOf(token: string): number | undefined {
    return (this.verified.get(token) ?? (jwt().decode(token) as { exp?: number } | null))?.exp;
  }

  /** The user id of a valid verification token, or null for anything else. */
  verifyEmailToken(token: string): number | null {
    const p = this.verify(token);
    return p && p.purpose === VERIFY_PURPOSE && isId(p.id) ? p.id : null;
  }

  /** The authentication checks in order: no token → null (the caller decides on 401), bad token, unknown user, revoked. */
  async authenticate(ctx: ReadContext, authorization: string | undefined): Promise<Actor | null> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!match) return null;
    const p = this.verify(match[1]);
    if (!p || p.purpose !== undefined || !isId(p.id) || typeof p.tv !== 'number') throw AppError.unauthenticated('Invalid token');
    const user = await actorById(ctx, p.id);
    if (!user) throw AppError.unauthenticated('User not found');
    if (user.tokenVersion !== p.tv) throw AppError.unauthenticated('Invalid token');
    return user;
  }
}

function isId(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 && v <= 2_147_483_647;
}
