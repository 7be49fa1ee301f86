import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import bcrypt from 'bcrypt';
import jwt from 'jsonwebtoken';
import { Pool } from 'pg';
import { adminUsersPage, postById, postsCursor, postsPage, postsPageGraphql, postsSimple, tenantPosts, trashPage, type Named } from './raw-sql';
import { createCommentSql, createPostSql, loginSql } from './sql';
import { LIST_PER_PAGE, POSTS_PER_PAGE, bearerClaims, decodeCursor, jwtSecret, one as oneOf, positive, slugify } from './common';

/**
 * The strongest reference the service is measured against: node:http + pg, no framework, no
 * ORM, no validation library. Every read is ONE named prepared statement (parsed and planned once
 * per connection) that returns the finished response body as text, pagination keys included;
 * Node parses the URL and writes that text. It keeps the rules that cost time (soft-delete and
 * tenant conditions, token checks with the user's token version and role, bcrypt for unknown
 * emails, 404s) so the comparison is about overhead only. express.ts is the same on Express 5,
 * set up as a typical Express service (default ETag, helmet, a request id, an access log line).
 */
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const secret = jwtSecret();
const dummyHash = bcrypt.hash('unknown-user', 12);
const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
const message = (res: ServerResponse, status: number, msg: string) => send(res, status, JSON.stringify({ message: msg }));

const one = (statement: Named, values: unknown[]) => oneOf(pool, statement, values);

function readBody(req: IncomingMessage): Promise<any> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        resolve(chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {});
      } catch {
        resolve(undefined);
      }
    });
  });
}

/** The bearer token's claims, or null after answering 401. */
function claims(req: IncomingMessage, res: ServerResponse): { id: number; tv: number } | null {
  const c = bearerClaims(req.headers.authorization, secret);
  if (typeof c === 'string') return message(res, 401, c), null;
  return c;
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://x');
  const path = url.pathname;
  const q = url.searchParams;
  if (req.method === 'GET' && path === '/posts') {
    const paginate = q.get('paginate') ?? 'page';
    if (paginate === 'cursor') {
      const id = decodeCursor(q.get('cursor'));
      if (id === null) return message(res, 422, 'Validation failed');
      return send(res, 200, (await one(postsCursor, [id]))!);
    }
    const page = positive(q.get('page'), 1);
    if (page === null) return message(res, 422, 'Validation failed');
    return send(res, 200, (await one(paginate === 'simple' ? postsSimple : postsPage, [page, POSTS_PER_PAGE]))!);
  }
  if (req.method === 'GET' && path.startsWith('/posts/')) {
    const id = positive(path.slice(7));
    const body = id === null ? null : await one(postById, [id]);
    return body === null ? message(res, 404, 'Post not found') : send(res, 200, body);
  }
  if (req.method === 'GET' && (path === '/trash' || path === '/admin/users')) {
    const actor = claims(req, res);
    if (!actor) return;
    const page = positive(q.get('page'), 1);
    if (page === null) return message(res, 422, 'Validation failed');
    const body = await one(path === '/trash' ? trashPage : adminUsersPage, [page, LIST_PER_PAGE, actor.id, actor.tv]);
    return body === null ? message(res, 403, 'Forbidden') : send(res, 200, body);
  }
  if (req.method === 'GET' && path === '/tenant/posts') {
    const raw = req.headers['x-tenant-id'];
    const tenant = positive(typeof raw === 'string' ? raw.trim() : undefined);
    if (tenant === null) return message(res, 401, 'Unknown tenant');
    return send(res, 200, (await one(tenantPosts, [tenant]))!);
  }
  if (req.method === 'POST' && path === '/graphql') {
    // Answers the benchmark's posts(page) query with exactly its fields.
    const body = await readBody(req);
    const page = Number(body?.variables?.page ?? 1);
    return send(res, 200, (await one(postsPageGraphql, [page, POSTS_PER_PAGE]))!);
  }
  if (req.method === 'POST' && path === '/auth/login') {
    const { email, password } = (await readBody(req)) ?? {};
    if (typeof email !== 'string' || typeof password !== 'string') return message(res, 422, 'Validation failed');
    const { rows } = await pool.query({ name: 'login', text: loginSql, values: [email.trim().toLowerCase()] });
    const ok = await bcrypt.compare(password, rows[0]?.password ?? (await dummyHash));
    if (!rows.length || !ok) return message(res, 401, 'Invalid credentials');
    const token = jwt.sign({ id: rows[0].id, tv: rows[0].token_version }, secret, { algorithm: 'HS256', expiresIn: '7d' });
    return send(res, 200, `{"user":${rows[0].json},"token":${JSON.stringify(token)}}`);
  }
  if (req.method === 'POST' && path === '/posts') {
    const actor = claims(req, res);
    if (!actor) return;
    const { title, body } = (await readBody(req)) ?? {};
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
  }
  const comment = /^\/posts\/([^/]+)\/comments$/.exec(path);
  if (req.method === 'POST' && comment) {
    const actor = claims(req, res);
    if (!actor) return;
    const id = positive(comment[1]);
    if (id === null) return message(res, 404, 'Post not found');
    const { body } = (await readBody(req)) ?? {};
    if (typeof body !== 'string' || !body.trim()) return message(res, 422, 'Validation failed');
    const { rows } = await pool.query({ name: 'create_comment', text: createCommentSql, values: [actor.id, actor.tv, id, body] });
    if (!rows[0].actor) return message(res, 401, 'User not found');
    if (!rows[0].post) return message(res, 404, 'Post not found');
    return send(res, 201, rows[0].comment);
  }
  if (path === '/readyz') return send(res, 200, '{"status":"ready"}');
  return message(res, 404, 'Not found');
}

const server = createServer((req, res) => {
  handle(req, res).catch((err) => {
    process.stderr.write(`reference: ${(err as Error)?.stack ?? err}\n`);
    if (!res.headersSent) message(res, 500, 'Internal server error');
  });
});
server.keepAliveTimeout = 5_000;
server.listen(Number(process.env.PORT ?? 3001), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () => {
  server.close(() => void pool.end().then(() => process.exit(0)));
  server.closeIdleConnections();
});
