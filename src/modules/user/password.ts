import { onFirstUse } from '../../core/lazy';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on the first hash or compare (core/lazy.ts)
const bcrypt = onFirstUse(() => require('bcrypt') as typeof import('bcrypt'));

/**
 * bcrypt's async functions run on libuv's thread pool, so hashing never blocks the event loop.
 * The cost is set once from BCRYPT_COST at start; hashes of any cost still verify.
 */
let cost = 12;

export function setBcryptCost(value: number): void {
  cost = value;
}

export function hashPassword(plain: string): Promise<string> {
  return bcrypt().hash(plain, cost);
}

/** What bcrypt produces: `$2a$`/`$2b$`/`$2y$`, a two-digit cost, 53 characters of salt and hash. */
const BCRYPT_HASH = /^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/;

export function isPasswordHash(value: unknown): boolean {
  return typeof value === 'string' && BCRYPT_HASH.test(value);
}

export function verifyPassword(plain: string, hash: string): Promise<boolean> {
  return bcrypt().compare(plain, hash);
}

/** A valid hash of a random secret: logins for unknown emails compare against it, so they take as long. */
let dummyHash: Promise<string> | undefined;
export function dummyPasswordHash(): Promise<string> {
  dummyHash ??= bcrypt().hash(`unknown-user-${Math.random()}`, cost);
  return dummyHash;
}
