import 'reflect-metadata';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultLogger, MikroORM, type EntityManager, type LogContext } from '@mikro-orm/postgresql';
import { ormConfig } from '../mikro-orm.config';
import { requestFork, type ReadContext } from '../src/core/context';
import { paginate } from '../src/core/pagination';
import { startEmbeddedPostgres } from '../src/db/embedded';
import { migrateDatabase } from '../src/db/orm';
import { runStatement } from '../src/db/statements';
import * as auth from '../src/modules/auth/auth.repository';
import * as comment from '../src/modules/comment/comment.repository';
import * as idempotency from '../src/modules/idempotency/idempotency.repository';
import * as mail from '../src/modules/mail/mail.repository';
import * as post from '../src/modules/post/post.repository';
import * as tenantPost from '../src/modules/tenant-post/tenant-post.repository';
import * as testing from '../src/modules/testing/testing.repository';
import * as trash from '../src/modules/trash/trash.repository';
import * as user from '../src/modules/user/user.repository';
import { seedDemo } from '../src/modules/testing/testing.demo';
import { setBcryptCost } from '../src/modules/user/password';

/**
 * `npm run sql`: the SQL every repository sends, written next to it as `<f>.repository.sql`
 * (as Immich checks in server/src/queries/*.sql), so a change to a query is a change to a .sql
 * file in review. Each repository function runs here as the service calls it, on a migrated
 * database with the demo data, and the statements MikroORM's logger receives are written down
 * under a comment naming the function: the ORM's filters as they apply (softDelete, the tenant),
 * values as PostgreSQL's $1, $2, ... (the driver binds them). test/repository-sql.test.ts
 * regenerates them on its own database and fails when they differ from the committed files.
 */

/** What a sample gets: an EntityManager (and one whose `tenant` filter carries tenant 1), a read context, the demo's ids. */
interface Run {
  orm: MikroORM;
  em: EntityManager;
  tenant: EntityManager;
  ctx: ReadContext & { readFrom?: 'read' | 'write' };
  ids: { user: number; post: number; comment: number; tenantPost: number };
  /** `fn` in a transaction that is rolled back. */
  rolledBack(fn: (tx: EntityManager) => Promise<unknown>): Promise<void>;
}

/** One call of a repository function, named by what the service does with it. */
type Sample = [what: string, run: (r: Run) => Promise<unknown>];

/** Each repository's exported functions: its samples, or why it sends nothing of its own (a part of other statements). */
type Catalogue = Record<string, Record<string, Sample[] | string>>;

const PAGE = { kind: 'page', page: 1 } as const;
const postsPage = { perPage: post.POSTS_PER_PAGE, orderBy: post.POST_LIST_ORDER };
const viewRows = { name: 'view', map: (_ctx: unknown, rows: { id: number }[]) => rows };

export const CATALOGUE: Catalogue = {
  'src/modules/post/post.repository.ts': {
    postJsonSource: [
      ['GET /posts: the first page and its total', ({ ctx }) => paginate(post.postJsonSource(ctx), {}, PAGE, postsPage)],
      ['GET /posts again: the total counted before, the data version only', ({ ctx }) => paginate(post.postJsonSource(ctx), {}, PAGE, postsPage)],
      ['GET /posts?published=1&author=1&paginate=simple&page=2', ({ ctx, ids }) => paginate(post.postJsonSource(ctx), { published: true, publishedAt: { $ne: null }, user: ids.user }, { kind: 'simple', page: 2 }, postsPage)],
      ['GET /trash: trashed posts (softDelete lifted), newest deletion first', ({ ctx }) => paginate(post.postJsonSource(ctx, { softDelete: false }), { deletedAt: { $ne: null } }, PAGE, { perPage: 20, orderBy: [{ deletedAt: 'desc' }, { id: 'desc' }] })],
    ],
    postSource: [
      ['GraphQL posts: the first page of views (the total counted before: the data version)', ({ ctx }) => paginate(post.postSource(ctx, viewRows), {}, PAGE, postsPage)],
      ['GraphQL postsCursor: the next slice after a cursor', ({ ctx, ids }) => paginate(post.postSource(ctx, viewRows), {}, { kind: 'cursor', cursor: { id: ids.post + 1, towards: 'next' }, direction: 'desc' }, postsPage)],
      ['a page past the end: the total counted on its own', ({ ctx }) => paginate(post.postSource(ctx, viewRows), {}, { kind: 'page', page: 1000 }, postsPage)],
    ],
    postById: [['GraphQL post(id)', ({ ctx, ids }) => post.postById(ctx, viewRows, ids.post)]],
    postJson: [['GET /posts/:id', ({ ctx, ids }) => post.postJson(ctx, ids.post)]],
    postJsonStatement: [['POST /posts: the answer, read back (and kept under an Idempotency-Key) in the create', ({ em, ids }) => em.transactional(async (tx) => runStatement(tx, await post.postJsonStatement(tx, ids.post)))]],
    writtenPostJson: 'postJson in the write\'s transaction',
    postJsons: [['GraphQL Post.etag: a batch of posts\' REST answers, trashed ones included', ({ ctx, ids }) => post.postJsons(ctx, [ids.post, ids.post + 1])]],
    currentPostTag: [['If-Match: the current answer, trashed or not, in the write\'s transaction', ({ em, ids }) => em.transactional((tx) => post.currentPostTag(tx, ids.post))]],
    lockSlug: [['POST /posts: creates of one slug take turns', ({ em }) => em.transactional((tx) => post.lockSlug(tx, 'hello-world'))]],
    takenSlugs: [['POST /posts: the slugs that may be siblings', ({ em }) => post.takenSlugs(em, 'hello-world')]],
  },
  'src/modules/comment/comment.repository.ts': {
    commentsOfPosts: [['GraphQL Post.comments: the comments of a page of posts', ({ em, ids }) => comment.commentsOfPosts(em, [ids.post, ids.post + 1], false)]],
    commentsJsonOfPost: "a part of the post's REST answer (post.repository.sql)",
    commentJsonStatement: [['POST /posts/:id/comments: the answer, read back in the create', ({ em, ids }) => em.transactional(async (tx) => runStatement(tx, await comment.commentJsonStatement(tx, [ids.comment])))]],
    writtenCommentJson: [['PATCH /comments/:id: the answer, read back in the write', ({ em, ids }) => em.transactional((tx) => comment.writtenCommentJson(tx, { id: ids.comment } as never))]],
    currentCommentTag: 'writtenCommentJson, hashed',
    commentJsons: [['GraphQL Comment.etag: a batch of comments\' REST answers', ({ em, ids }) => comment.commentJsons(em, [ids.comment, ids.comment + 1])]],
  },
  'src/modules/user/user.repository.ts': {
    userJsonSource: [['GET /admin/users: the first page and its total', ({ ctx }) => paginate(user.userJsonSource(ctx), {}, PAGE, { perPage: 20, orderBy: [{ id: 'asc' }] })]],
    userViewSource: [['GraphQL adminUsersCursor: a slice', ({ ctx }) => paginate(user.userViewSource(ctx), {}, { kind: 'cursor', cursor: null, direction: 'asc' }, { perPage: 20, orderBy: [{ id: 'asc' }] })]],
    userJson: [['the auth payload\'s user', ({ ctx, ids }) => user.userJson(ctx, ids.user)]],
    writtenUserJson: 'userJson in the write\'s transaction',
    userJsons: [['GraphQL User.etag: a batch of users\' REST answers', ({ ctx, ids }) => user.userJsons(ctx, [ids.user, ids.user + 1])]],
    currentUserTag: 'userJson in the write\'s transaction, hashed',
    actorById: [['every authenticated request: the bearer token\'s user', ({ ctx, ids }) => user.actorById(ctx, ids.user)]],
    authorsById: [['GraphQL Post.user, Comment.user: a batch of authors', ({ em, ids }) => user.authorsById(em, [ids.user, ids.user + 1])]],
    leftJoinAuthor: 'a part of the posts\' and comments\' statements',
    authorJsonSql: 'a part of the posts\' and comments\' REST answers',
  },
  'src/modules/tenant-post/tenant-post.repository.ts': {
    tenantPostJsons: [
      ['GET /tenant/posts: the tenant\'s posts (tenant 1 from X-Tenant-Id)', ({ tenant }) => tenantPost.tenantPostJsons(tenant)],
      ['GET /tenant/admin/posts: every tenant\'s (the tenant filter lifted)', ({ em }) => tenantPost.tenantPostJsons(em, { tenant: false })],
    ],
    tenantPostViews: [['GraphQL tenantPosts', ({ tenant }) => tenantPost.tenantPostViews(tenant)]],
    readTenantPosts: 'tenantPostJsons and tenantPostViews',
    writtenTenantPostJson: [['POST /tenant/posts: the answer, read back', ({ tenant, ids }) => tenantPost.writtenTenantPostJson(tenant, { id: ids.tenantPost } as never)]],
  },
  'src/modules/auth/auth.repository.ts': {
    storeResetToken: [['POST /auth/forgot-password', ({ em }) => em.transactional((tx) => auth.storeResetToken(tx, 'grace@example.com', 'f'.repeat(64)))]],
    claimResetToken: [['POST /auth/reset-password', ({ em }) => em.transactional((tx) => auth.claimResetToken(tx, 'grace@example.com', 'f'.repeat(64)))]],
  },
  'src/modules/mail/mail.repository.ts': {
    claimNextMail: [['the outbox: the next due mail', ({ em }) => em.transactional((tx) => mail.claimNextMail(tx, 120_000))]],
    markMailSent: [['the outbox: sent', ({ em }) => em.transactional((tx) => mail.markMailSent(tx, 1))]],
    markMailFailed: [['the outbox: a failed send, retried later', ({ em }) => em.transactional((tx) => mail.markMailFailed(tx, 1, 2, 'connection refused', 2000))]],
    deleteSentMails: [['the outbox\'s cleanup', ({ em }) => mail.deleteSentMails(em, 86_400_000)]],
  },
  'src/modules/idempotency/idempotency.repository.ts': {
    lockAndLookUp: [['a create with an Idempotency-Key: the key\'s lock and its answer', ({ em }) => em.transactional((tx) => idempotency.lockAndLookUp(tx, '42', 'u:1', 'key'))]],
    storeAnswerOf: [
      ['the key\'s answer, stored by the statement that reads the new post back', ({ rolledBack, ids }) => rolledBack(async (tx) => idempotency.storeAnswerOf(tx, { scope: 'u:1', key: 'key', fingerprint: 'f', status: 201, resourceId: ids.post, hours: 24 }, await post.postJsonStatement(tx, ids.post)))],
    ],
    storeAnswer: [['the key\'s answer, stored after the create', ({ rolledBack }) => rolledBack((tx) => idempotency.storeAnswer(tx, { scope: 'u:1', key: 'key', fingerprint: 'f', status: 200, resourceId: 1, hours: 24 }, null))]],
    readAnswer: 'runs the statement it is given (postJsonStatement, commentJsonStatement)',
    purgeExpiredKeys: [['the keys\' expiry', ({ em }) => idempotency.purgeExpiredKeys(em)]],
  },
  'src/modules/trash/trash.repository.ts': {
    tryRetentionLock: [['the trash retention: one instance at a time', ({ em }) => em.transactional((tx) => trash.tryRetentionLock(tx, 4711_0002))]],
    deleteTrashedBefore: [['the trash retention: posts trashed more than RETENTION days ago', ({ rolledBack }) => rolledBack((tx) => trash.deleteTrashedBefore(tx, 30))]],
  },
  // Last: it empties the database.
  'src/modules/testing/testing.repository.ts': {
    truncateTables: [['POST /__test/reset', ({ rolledBack }) => rolledBack((tx) => testing.truncateTables(tx, ['mikro_orm_migrations', 'page_versions']))]],
    removeCreated: [['the test server stops: what it created is dropped', ({ orm }) => testing.removeCreated(orm, { functions: new Set() })]],
    requireEmptyDatabase: [['the test server starts on DATABASE_URL', ({ orm }) => testing.requireEmptyDatabase(orm)]],
  },
};

/** The statements MikroORM hands its logger (the service's own through db/statements.ts as well), while `recording`. */
class Recorder extends DefaultLogger {
  statements: string[] | undefined;

  override logQuery(context: { query: string } & LogContext): void {
    if (this.statements && !/^(begin|commit|rollback|savepoint|release savepoint)\b/i.test(context.query)) this.statements.push(context.query);
  }
}

/** Line breaks before the clauses of the statement itself (not of its sub-queries or strings): only for reading. */
export function layOut(sql: string): string {
  const CLAUSE = /^ (from|where|left join|inner join|group by|order by|limit|offset|on conflict|returning|values|select) /i;
  let out = '';
  let depth = 0;
  let quote: string | null = null;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (depth === 0 && c === ' ' && CLAUSE.test(sql.slice(i, i + 16)) && !/delete$/i.test(out)) {
      out += '\n';
      continue;
    }
    out += c;
  }
  return out.replace(/\n\s+/g, '\n');
}

const ROLLBACK = new Error('rolled back on purpose');

/** Every repository's .sql file (path from the repository's root → text), from the samples run on the database at `url`. */
export async function repositorySql(url: string): Promise<Map<string, string>> {
  await migrateDatabase(url);
  let recorder: Recorder | undefined;
  const orm = await MikroORM.init({ ...ormConfig({ clientUrl: url, poolMax: 2 }), loggerFactory: (options) => (recorder = new Recorder(options)) });
  try {
    setBcryptCost(4);
    await orm.em.fork().transactional((tx) => seedDemo(tx));
    const row = async (text: string) => Number((await runStatement<{ id: number }>(orm.em.fork(), { sql: text, params: [] }))[0].id);
    const ids = {
      user: await row(`select min(id) as id from users`),
      post: await row(`select min(id) as id from posts where deleted_at is null`),
      comment: await row(`select min(id) as id from comments`),
      tenantPost: await row(`select min(id) as id from tenant_posts where tenant_id = 1`),
    };
    const files = new Map<string, string>();
    for (const [path, functions] of Object.entries(CATALOGUE)) {
      let text = `-- The SQL that ${path.split('/').pop()} sends, written by \`npm run sql\` (scripts/sql.ts): each function as the service\n-- calls it, with the ORM's filters, values bound as $1, $2, ... test/repository-sql.test.ts fails when it changes.\n`;
      for (const [name, samples] of Object.entries(functions)) {
        if (typeof samples === 'string') continue;
        for (const [what, sample] of samples) {
          const em = orm.em.fork();
          const run: Run = {
            orm,
            em,
            tenant: requestFork(orm, 1),
            ctx: { em, reader: () => em },
            ids,
            rolledBack: (fn) => em.transactional(async (tx) => {
              await fn(tx);
              throw ROLLBACK;
            }).catch((err: unknown) => {
              if (err !== ROLLBACK) throw err;
            }),
          };
          recorder!.statements = [];
          await sample(run).catch((err: unknown) => {
            // The empty database's check throws by design once it finds the demo's tables.
            if (name !== 'requireEmptyDatabase') throw err;
          });
          const statements = recorder!.statements;
          recorder!.statements = undefined;
          if (!statements.length) throw new Error(`${path} ${name} (${what}) sent no statement`);
          text += `\n-- ${name}: ${what}\n${statements.map((s) => `${layOut(s)};\n`).join('')}`;
        }
      }
      files.set(path.replace(/\.ts$/, '.sql'), text);
    }
    return files;
  } finally {
    await orm.close(true);
  }
}

/** Writes every .sql file on an embedded PostgreSQL of its own, in a temporary folder removed afterwards. */
async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'blog-api-sql-'));
  const pg = await startEmbeddedPostgres({ dataDir: join(dir, 'data') });
  try {
    const root = join(__dirname, '..', '..');
    for (const [path, text] of await repositorySql(pg.url)) {
      writeFileSync(join(root, path), text);
      process.stdout.write(`wrote ${path}\n`);
    }
  } finally {
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`sql failed: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  });
}
