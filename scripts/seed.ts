import 'reflect-metadata';
import { loadConfig, ConfigError } from '../src/config/config';
import { startEmbeddedPostgres, EmbeddedPostgresError, type EmbeddedPostgres } from '../src/db/embedded';
import { initOrm, migrate } from '../src/db/orm';
import { User, type Role } from '../src/modules/user/user.entity';
import { Post } from '../src/modules/post/post.entity';
import { nextFreeSlug, slugify } from '../src/modules/post/post.slug';
import { Comment } from '../src/modules/comment/comment.entity';
import { TenantPost } from '../src/modules/tenant-post/tenant-post.entity';
import { setBcryptCost } from '../src/modules/user/password';
import { runningServiceUrl } from '../src/core/service-url';
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * `npm run seed`: demo data in the database `npm start` uses (DATABASE_URL, else the embedded
 * PostgreSQL under DATA_DIR). Skips everything when the demo admin already exists, so running it
 * twice is harmless. A running `npm start` may keep running: the seed then uses that server's
 * embedded cluster instead of starting one (startEmbeddedPostgres adopts it and leaves it up), and
 * prints the URL that server says it listens on (DATA_DIR/service.json), whatever its PORT.
 */
const PASSWORD = 'demo-password';
const ADMIN_EMAIL = 'admin@example.com';

const USERS: { name: string; email: string; role: Role; verified: boolean }[] = [
  { name: 'Demo Admin', email: ADMIN_EMAIL, role: 'admin', verified: true },
  { name: 'Mo Moderator', email: 'moderator@example.com', role: 'moderator', verified: true },
  { name: 'Grace Hopper', email: 'grace@example.com', role: 'user', verified: true },
  { name: 'Alan Turing', email: 'alan@example.com', role: 'user', verified: true },
  { name: 'Barbara Liskov', email: 'barbara@example.com', role: 'user', verified: false },
];

const POSTS: { author: string; title: string; body: string; published: boolean; trashed?: boolean; comments?: [string, string][] }[] = [
  { author: 'grace@example.com', title: 'Hello, world', body: 'The first post of the demo blog.', published: true, comments: [['alan@example.com', 'Welcome!'], ['barbara@example.com', 'Nice to see this up.']] },
  { author: 'grace@example.com', title: 'Notes on compilers', body: 'A compiler is a program that translates programs.', published: true, comments: [['alan@example.com', 'Which one do you use?']] },
  { author: 'alan@example.com', title: 'Computing machinery and intelligence', body: 'Can machines think?', published: true },
  { author: 'alan@example.com', title: 'A draft about morphogenesis', body: 'Unpublished thoughts on patterns.', published: false },
  { author: 'barbara@example.com', title: 'Substitution, explained', body: 'Subtypes must be usable where their base types are.', published: true, comments: [['grace@example.com', 'Clear and short.']] },
  { author: 'barbara@example.com', title: 'An old post in the trash', body: 'This one was deleted and waits in the trash.', published: true, trashed: true },
];

const TENANT_POSTS: { tenantId: number; title: string; body: string }[] = [
  { tenantId: 1, title: 'Acme: quarterly notes', body: 'Visible with x-tenant-id: 1 only.' },
  { tenantId: 1, title: 'Acme: onboarding', body: 'Welcome to Acme.' },
  { tenantId: 2, title: 'Globex: roadmap', body: 'Visible with x-tenant-id: 2 only.' },
];

/** Taken slugs (trashed posts included) get -2, -3, …: the service's own rule (post.slug.ts). */
async function freeSlug(em: EntityManager, title: string): Promise<string> {
  const base = slugify(title);
  const taken = await em.find(Post, { slug: { $like: `${base}%` } }, { filters: { softDelete: false }, fields: ['slug'] });
  return nextFreeSlug(base, taken.map((p) => p.slug));
}

async function seed(em: EntityManager): Promise<boolean> {
  if (await em.findOne(User, { email: ADMIN_EMAIL }, { filters: { softDelete: false } })) return false;

  const users = new Map<string, User>();
  for (const u of USERS) {
    const user = em.create(User, { name: u.name, email: u.email, role: u.role, password: '', emailVerifiedAt: u.verified ? new Date() : null } as User);
    await user.setPassword(PASSWORD);
    users.set(u.email, user);
  }
  await em.flush();

  // Spread creation times so the newest-first order is visible.
  let minutesAgo = POSTS.length * 60;
  for (const p of POSTS) {
    const createdAt = new Date(Date.now() - minutesAgo-- * 60_000);
    const post = em.create(Post, {
      user: users.get(p.author)!,
      title: p.title,
      slug: await freeSlug(em, p.title),
      body: p.body,
      published: p.published,
      publishedAt: p.published ? createdAt : null,
      deletedAt: p.trashed ? new Date() : null,
      createdAt,
      updatedAt: createdAt,
    } as Post);
    await em.flush();
    for (const [email, body] of p.comments ?? []) em.create(Comment, { post, user: users.get(email)!, body } as Comment);
  }
  for (const t of TENANT_POSTS) em.create(TenantPost, t as TenantPost);
  await em.flush();
  return true;
}

async function main(): Promise<void> {
  const config = loadConfig();
  setBcryptCost(config.bcryptCost);
  let embedded: EmbeddedPostgres | undefined;
  let url = config.databaseUrl;
  if (!url) {
    embedded = await startEmbeddedPostgres({ dataDir: config.dataDir });
    url = embedded.url;
  }
  const orm = await initOrm({ clientUrl: url });
  try {
    await migrate(orm);
    // One transaction: a seed that fails halfway leaves nothing, so the next run (which skips
    // whenever the admin exists) does not mistake half the data for all of it.
    const created = await orm.em.fork().transactional((em) => seed(em));
    const where = config.databaseUrl ? 'DATABASE_URL' : `the embedded database in ${config.dataDir}`;
    if (!created) {
      process.stdout.write(`Demo data already present in ${where} (${ADMIN_EMAIL} exists); nothing done.\n`);
    } else {
      const width = Math.max(...USERS.map((u) => u.email.length));
      const running = runningServiceUrl(config.dataDir);
      const url = running ?? `http://localhost:${config.port}`;
      process.stdout.write(
        `Seeded ${where}: ${USERS.length} users, ${POSTS.length} posts (one in the trash), comments, ${TENANT_POSTS.length} posts of tenants 1 and 2.\n\n` +
          `Log in with any of these (password: ${PASSWORD}):\n` +
          USERS.map((u) => `  ${u.email.padEnd(width)}  ${u.role}${u.verified ? '' : ' (unverified)'}`).join('\n') +
          '\n\n' +
          (running ? `The service is running at ${url}. Try:\n` : `No service is running on ${config.dataDir}; start it with npm start (${url} with these settings), then try:\n`) +
          `  curl -s -X POST ${url}/auth/login -H 'content-type: application/json' -d '{"email":"${ADMIN_EMAIL}","password":"${PASSWORD}"}'\n`,
      );
    }
  } finally {
    await orm.close(true);
    await embedded?.stop();
  }
}

main().catch((err) => {
  const known = err instanceof ConfigError || err instanceof EmbeddedPostgresError;
  process.stderr.write(`Seed failed: ${known ? err.message : (err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
