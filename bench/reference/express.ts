import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import bcrypt from 'bcrypt';
import helmet from 'helmet';
import jwt from 'jsonwebtoken';
import { Pool } from 'pg';
import pino from 'pino';
import { adminUsersPage, postById, postsCursor, postsPage, postsPageGraphql, postsSimple, tenantPosts, trashPage, type Named } from './raw-sql';
import { createCommentSql, createPostSql, loginSql } from './sql';
import { LIST_PER_PAGE, POSTS_PER_PAGE, bearerClaims, decodeCursor, jwtSecret, one as oneOf, positive, slugify } from './common';

/**
 * The Express reference: the raw reference (raw.ts) with Express 5 as its HTTP layer, set up as a
 * typical Express service is. Same pg pool, same named prepared statement per answer (raw-sql.ts,
 * sql.ts: PostgreSQL builds the whole body), same rules (common.ts); what differs is the HTTP
 * layer and what a typical Express service does on every answer:
 * - Express's router, its request and response objects, `express.json()` on the routes that take
 *   a body, answers written with `res.type('json').send(text)`;
 * - Express's default ETag (a weak tag of every body `res.send` writes, and 304 when a request's
 *   If-None-Match matches it);
 * - `helmet()` with its defaults (its dozen security headers on every answer; it also removes
 *   X-Powered-By);
 * - a request id per request (`crypto.randomUUID()`), sent as `X-Request-Id`;
 * - an access log line per request with pino at info level when the response finishes (method,
 *   path, status, duration, request id), the logger's level from LOG_LEVEL (the bench gives it
 *   the service's: bench/config.ts BENCH_LOG_LEVEL), so both do the same logging work.
 * The bodies are byte for byte raw.ts's (and the service's: bench/run.ts checks it before any
 * load). service/Express shows what the service costs next to a typical Express service over the
 * same SQL; Express/raw what Express and that typical per-answer work cost over bare node:http.
 */
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const secret = jwtSecret();
const dummyHash = bcrypt.hash('unknown-user', 12);
/** pino's defaults (JSON lines on stdout), at the level the service is given. */
const log = pino({ level: process.env.LOG_LEVEL || 'info' });

const one = (statement: Named, values: unknown[]) => oneOf(pool, statement, values);
const send = (res: Response, status: number, body: string) => void res.status(status).type('json').send(body);
const message = (res: Response, status: number, msg: string) => void res.status(status).json({ message: msg });
/** A query value as URLSearchParams.get gives it to raw.ts (the first of repeated keys). */
const first = (v: unknown): string | null => (typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : null);

/** The bearer token's claims, or null after answering 401. */
function claims(req: Request, res: Response): { id: number; tv: number } | null {
  const c = bearerClaims(req.headers.authorization, secret);
  if (typeof c === 'string') return message(res, 401, c), null;
  return c;
}

const app = express();
app.use(helmet());
// The request id, and the access log line once the answer is written.
app.use((req, res, next) => {
  const start = process.hrtime.bigint();
  const requestId = randomUUID();
  res.setHeader('X-Request-Id', requestId);
  res.on('finish', () => {
    log.info({ requestId, method: req.method, path: req.path, status: res.statusCode, durationMs: Number(process.hrtime.bigint() - start) / 1e6 }, 'request');
  });
  next();
});
const json = express.json();

app.get('/readyz', (_req, res) => send(res, 200, '{"status":"ready"}'));

app.get('/posts', async (req, res) => {
  const paginate = first(req.query.paginate) ?? 'page';
  if (paginate === 'cursor') {
    const id = decodeCursor(first(req.query.cursor));
    if (id === null) return message(res, 422, 'Validation failed');
    return send(res, 200, (await one(postsCursor, [id]))!);
  }
  const page = positive(first(req.query.page), 1);
  if (page === null) return message(res, 422, 'Validation failed');
  send(res, 200, (await one(paginate === 'simple' ? postsSimple : postsPage, [page, POSTS_PER_PAGE]))!);
});

app.get('/posts/:id', async (req, res) => {
  const id = positive(req.params.id);
  const body = id === null ? null : await one(postById, [id]);
  if (body === null) return message(res, 404, 'Post not found');
  send(res, 200, body);
});

/** GET /trash (moderator) and GET /admin/users (admin): the statement answers null when the role does not fit. */
const moderated = (statement: Named) => async (req: Request, res: Response) => {
  const actor = claims(req, res);
  if (!actor) return;
  const page = positive(first(req.query.page), 1);
  if (page === null) return message(res, 422, 'Validation failed');
  const body = await one(statement, [page, LIST_PER_PAGE, actor.id, actor.tv]);
  if (body === null) return message(res, 403, 'Forbidden');
  send(res, 200, body);
};
app.get('/trash', moderated(trashPage));
app.get('/admin/users', moderated(adminUsersPage));

app.get('/tenant/posts', async (req, res) => {
  const raw = req.get('x-tenant-id');
  const tenant = positive(typeof raw === 'string' ? raw.trim() : undefined);
  if (tenant === null) return message(res, 401, 'Unknown tenant');
  send(res, 200, (await one(tenantPosts, [tenant]))!);
});

// The benchmark's posts(page) query with exactly its fields, as raw.ts answers it.
app.post('/graphql', json, async (req, res) => {
  const page = Number(req.body?.variables?.page ?? 1);
  send(res, 200, (await one(postsPageGraphql, [page, POSTS_PER_PAGE]))!);
});

app.post('/auth/login', json, async (req, res) => {
  const { email, password } = req.body ?? {};
  if (typeof email !== 'string' || typeof password !== 'string') return message(res, 422, 'Validation failed');
  const { rows } = await pool.query({ name: 'login', text: loginSql, values: [email.trim().toLowerCase()] });
  const ok = await bcrypt.compare(password, rows[0]?.password ?? (await dummyHash));
  if (!rows.length || !ok) return message(res, 401, 'Invalid credentials');
  const token = jwt.sign({ id: rows[0].id, tv: rows[0].token_version }, secret, { algorithm: 'HS256', expiresIn: '7d' });
  send(res, 200, `{"user":${rows[0].json},"token":${JSON.stringify(token)}}`);
});

app.post('/posts', json, async (req, res) => {
  const actor = claims(req, res);
  if (!actor) return;
  const { title, body } = req.body ?? {};
  if (typeof title !== 'string' || !title.trim() || typeof body !== 'string' || !body.trim()) return message(res, 422, 'Validation failed');
  const base = slugify(title);
  for (let n = 1; ; n++) {
    try {
      const { rows } = await pool.query({ name: 'create_post', text: createPostSql, values: [actor.id, actor.tv, title, n === 1 ? base : `${base}-${n}`, body] });
      if (!rows.length) return message(res, 401, 'User not found');
      return send(res, 201, rows[0].post);
    } catch (err) {
      if ((err as { code?: string }).code !== '23505') throw err; // slug taken: try the next suffix
    }
  }
});

app.post('/posts/:id/comments', json, async (req, res) => {
  const actor = claims(req, res);
  if (!actor) return;
  const id = positive(req.params.id);
  if (id === null) return message(res, 404, 'Post not found');
  const { body } = req.body ?? {};
  if (typeof body !== 'string' || !body.trim()) return message(res, 422, 'Validation failed');
  const { rows } = await pool.query({ name: 'create_comment', text: createCommentSql, values: [actor.id, actor.tv, id, body] });
  if (!rows[0].actor) return message(res, 401, 'User not found');
  if (!rows[0].post) return message(res, 404, 'Post not found');
  send(res, 201, rows[0].comment);
});

app.use((_req: Request, res: Response) => message(res, 404, 'Not found'));
app.use((err: Error & { status?: number; type?: string }, _req: Request, res: Response, _next: NextFunction) => {
  // express.json()'s errors (malformed JSON, too large) carry their status; anything else is ours.
  if (err.status && err.status < 500) return message(res, err.status === 400 ? 422 : err.status, 'Validation failed');
  process.stderr.write(`express reference: ${err?.stack ?? err}\n`);
  if (!res.headersSent) message(res, 500, 'Internal server error');
});

const server = app.listen(Number(process.env.PORT ?? 3004), process.env.HOST ?? '127.0.0.1');
server.keepAliveTimeout = 5_000;
process.on('SIGTERM', () => {
  server.close(() => void pool.end().then(() => process.exit(0)));
  server.closeIdleConnections();
});
