import { createSecretKey, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Pool } from 'pg';
import type { Named } from './raw-sql';

/**
 * What the two references (raw.ts on node:http, express.ts on Express 5) share besides their SQL
 * (raw-sql.ts, sql.ts): the rules they apply before a statement runs. raw.ts is the bare anchor
 * (no framework, nothing on an answer but its body); express.ts is a typical Express service over
 * the same SQL and rules (Express's default ETag, helmet's headers, a request id, an access log
 * line with pino). service/raw is the service's whole overhead over bare node:http; service/Express
 * what it costs next to a typical Express service; Express/raw what that typical service costs.
 */
export const POSTS_PER_PAGE = 10;
export const LIST_PER_PAGE = 20;

export const jwtSecret = (): KeyObject => createSecretKey(Buffer.from(process.env.JWT_SECRET!));

/** The finished response body of a named prepared statement (null when it returns no row or a null body). */
export async function one(pool: Pool, statement: Named, values: unknown[]): Promise<string | null> {
  const { rows } = await pool.query({ name: statement.name, text: statement.text, values });
  return rows[0]?.body ?? null;
}

/** A positive int4 from a path or query value; `fallback` when absent; null when malformed. */
export const positive = (raw: string | null | undefined, fallback: number | null = null) =>
  raw == null ? fallback : /^[1-9]\d{0,9}$/.test(raw) && Number(raw) <= 2_147_483_647 ? Number(raw) : null;

/** The bearer token's claims, or why not (the answer is 401 either way). */
export function bearerClaims(authorization: string | undefined, secret: KeyObject): { id: number; tv: number } | 'Unauthenticated' | 'Invalid token' {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!m) return 'Unauthenticated';
  try {
    const p = jwt.verify(m[1], secret, { algorithms: ['HS256'] }) as { id?: unknown; tv?: unknown };
    if (typeof p.id === 'number' && typeof p.tv === 'number') return { id: p.id, tv: p.tv };
  } catch { /* falls through */ }
  return 'Invalid token';
}

/** The id of a `next` cursor as the service encodes it; no cursor = from the newest; null = malformed. */
export function decodeCursor(raw: string | null): number | null {
  if (raw === null) return 2_147_483_647;
  try {
    const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    return c.to === 'next' && Number.isInteger(c.id) ? c.id : null;
  } catch {
    return null;
  }
}

export const slugify = (title: string) =>
  title.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 200) || 'post';
