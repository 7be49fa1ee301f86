import bcrypt from 'bcrypt';
import express, { type Request, type Response } from 'express';
import jwt from 'jsonwebtoken';
import { Pool } from 'pg';
import { createCommentSql, createPostSql, loginSql, postByIdSql, postPageSql } from './sql';

/**
 * The hand-written reference the service is measured against: Express + pg, one tuned SQL
 * statement per endpoint, no ORM, no validation library, JSON built by PostgreSQL. It keeps
 * the service's observable rules that cost time (bcrypt compare, also for unknown emails;
 * token version and soft-delete checks; 404s) so the comparison is about overhead only.
 */
const PER_PAGE = 10;
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const secret = process.env.JWT_SECRET!;
const dummyHash = bcrypt.hash('unknown-user', 12);
const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.use(express.json({ limit: '1mb' }));

const sendJson = (res: Response, status: number, text: string) => res.status(status).type('application/json').send(text);
const message = (res: Response, status: number, msg: string) => res.status(status).json({ message: msg });

function pageNumber(raw: unknown): number | null {
  if (raw === undefined) return 1;
  return typeof raw === 'string' && /^[1-9]\d{0,8}$/.test(raw) ? Number(raw) : null;
}

/** Page-format metadata around the `data` JSON text PostgreSQL produced. */
function pageJson(data: string, total: number, page: number): string {
  const lastPage = Math.max(1, Math.ceil(total / PER_PAGE));
  const from = (page - 1) * PER_PAGE + 1;
  const empty = from > total;
  const meta = {
    total, perPage: PER_PAGE, currentPage: page, lastPage,
    from: empty ? null : from, to: empty ? null : Math.min(total, page * PER_PAGE),
    nextPage: page < lastPage ? page + 1 : null,
  };
  return `{"data":${data},${JSON.stringify(meta).slice(1)}`;
}

app.get('/posts', async (req, res) => {
  const page = pageNumber(req.query.page);
  if (page === null) return res.status(422).json({ message: 'Validation failed', errors: [{ field: 'page', message: 'page must be a positive integer' }] });
  const { rows } = await pool.query(postPageSql('rest'), [(page - 1) * PER_PAGE, PER_PAGE]);
  sendJson(res, 200, pageJson(rows[0].data, rows[0].total, page));
});

// The GraphQL-equivalent: answers the benchmark's `posts(page)` query with exactly its fields.
app.post('/graphql', async (req, res) => {
  const page = Number(req.body?.variables?.page ?? 1);
  const { rows } = await pool.query(postPageSql('graphql'), [(page - 1) * PER_PAGE, PER_PAGE]);
  sendJson(res, 200, `{"data":{"posts":${pageJson(rows[0].data, rows[0].total, page)}}}`);
});

const postId = (raw: string) => (/^[1-9]\d{0,9}$/.test(raw) && Number(raw) <= 2_147_483_647 ? Number(raw) : null);

app.get('/posts/:id', async (req, res) => {
  const id = postId(req.params.id);
  const { rows } = id === null ? { rows: [] } : await pool.query(postByIdSql, [id]);
  if (!rows.length) return message(res, 404, 'Post not found');
  sendJson(res, 200, rows[0].post);
});

app.post('/auth/login', async (req, res) => {
  const { email, password } = req.body ?? {};
  if (typeof email !== 'string' || typeof password !== 'string') return message(res, 422, 'Validation failed');
  const { rows } = await pool.query(loginSql, [email.trim().toLowerCase()]);
  const ok = await bcrypt.compare(password, rows[0]?.password ?? (await dummyHash));
  if (!rows.length || !ok) return message(res, 401, 'Invalid credentials');
  const token = jwt.sign({ id: rows[0].id, tv: rows[0].token_version }, secret, { algorithm: 'HS256', expiresIn: '7d' });
  sendJson(res, 200, `{"user":${rows[0].json},"token":${JSON.stringify(token)}}`);
});

/** The bearer token's claims, or null after answering 401. */
function claims(req: Request, res: Response): { id: number; tv: number } | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  if (!m) return message(res, 401, 'Unauthenticated'), null;
  try {
    const p = jwt.verify(m[1], secret, { algorithms: ['HS256'] }) as { id?: unknown; tv?: unknown };
    if (typeof p.id === 'number' && typeof p.tv === 'number') return { id: p.id, tv: p.tv };
  } catch { /* falls through */ }
  return message(res, 401, 'Invalid token'), null;
}

const slugify = (title: string) =>
  title.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 200) || 'post';

app.post('/posts', async (req, res) => {
  const actor = claims(req, res);
  if (!actor) return;
  const { title, body } = req.body ?? {};
  if (typeof title !== 'string' || !title.trim() || typeof body !== 'string' || !body.trim()) return message(res, 422, 'Validation failed');
  const base = slugify(title);
  for (let n = 1; ; n++) {
    try {
      const { rows } = await pool.query(createPostSql, [actor.id, actor.tv, title, n === 1 ? base : `${base}-${n}`, body]);
      if (!rows.length) return message(res, 401, 'User not found');
      return sendJson(res, 201, rows[0].post);
    } catch (err) {
      if ((err as { code?: string }).code !== '23505') throw err; // slug taken: try the next suffix
    }
  }
});

app.post('/posts/:id/comments', async (req, res) => {
  const actor = claims(req, res);
  if (!actor) return;
  const id = postId(req.params.id);
  if (id === null) return message(res, 404, 'Post not found');
  const { body } = req.body ?? {};
  if (typeof body !== 'string' || !body.trim()) return message(res, 422, 'Validation failed');
  const { rows } = await pool.query(createCommentSql, [actor.id, actor.tv, id, body]);
  if (!rows[0].actor) return message(res, 401, 'User not found');
  if (!rows[0].post) return message(res, 404, 'Post not found');
  sendJson(res, 201, rows[0].comment);
});

app.get('/readyz', (_req, res) => {
  res.json({ status: 'ready' });
});

app.use((err: unknown, _req: Request, res: Response, _next: unknown) => {
  process.stderr.write(`reference: ${(err as Error)?.stack ?? err}\n`);
  message(res, 500, 'Internal server error');
});

const server = app.listen(Number(process.env.PORT ?? 3001), process.env.HOST ?? '127.0.0.1');
server.keepAliveTimeout = 5_000;
process.on('SIGTERM', () => {
  server.close(() => void pool.end().then(() => process.exit(0)));
  server.closeIdleConnections();
});
