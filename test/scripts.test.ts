import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcrypt';
import { Client } from 'pg';
import { createTestDatabase } from './support/harness';
import { builtService } from './support/service-build';

/**
 * `npm run seed` and `npm run set-role`, as npm runs them: built by scripts/build.mjs, then
 * `node dist/scripts/<name>.js` against a database of their own (DATABASE_URL).
 *
 * The build is the run's shared one (test/support/service-build.ts: scripts/build.mjs in a scratch
 * root whose sources are symlinks to this checkout); the scripts' DATA_DIR is a folder of this
 * file's own.
 */
let root: string;
let scratch: string;
let databaseUrl: string;
let db: Client;
/** The scripts' DATA_DIR: where a running service would say its URL (service.json). */
let dataDir: string;

beforeAll(async () => {
  root = builtService();
  scratch = mkdtempSync(join(tmpdir(), 'blog-api-scripts-'));
  databaseUrl = await createTestDatabase();
  db = new Client({ connectionString: databaseUrl });
  await db.connect();
  dataDir = join(scratch, 'data');
  mkdirSync(dataDir);
}, 120_000);
afterAll(async () => {
  await db?.end();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** Runs a built script as `npm run <name> -- args` would; the environment is the test's, not jest's. */
function script(name: 'seed' | 'set-role', args: string[] = [], url = databaseUrl) {
  const env = { PATH: process.env.PATH ?? '', DATABASE_URL: url, DATA_DIR: dataDir, BCRYPT_COST: '4', PORT: '3000', NODE_ENV: 'development' };
  const r = spawnSync(process.execPath, [join(root, 'dist', 'scripts', `${name}.js`), ...args], { encoding: 'utf8', env, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const rows = async (sql: string) => (await db.query(sql)).rows;
const counts = () => rows(`select (select count(*) from users)::int as users, (select count(*) from posts)::int as posts,
  (select count(*) from comments)::int as comments, (select count(*) from tenant_posts)::int as tenant_posts`);

const SEEDED = (tryIt: string) => `Seeded DATABASE_URL: 5 users, 6 posts (one in the trash), comments, 3 posts of tenants 1 and 2.

Log in with any of these (password: demo-password):
  admin@example.com      admin
  moderator@example.com  moderator
  grace@example.com      user
  alan@example.com       user
  barbara@example.com    user (unverified)

${tryIt}
`;
const LOGIN = (url: string) => `  curl -s -X POST ${url}/auth/login -H 'content-type: application/json' -d '{"email":"admin@example.com","password":"demo-password"}'`;

describe('npm run seed', () => {
  it('prints the logins and creates an admin, users, posts, comments, a trashed post and two tenants\u2019 posts', async () => {
    // A service running on this data directory (this process stands for it) on a port of its own.
    writeFileSync(join(dataDir, 'service.json'), JSON.stringify({ url: 'http://localhost:45678', pid: process.pid }));
    const r = script('seed');
    expect(r).toEqual({ code: 0, stdout: SEEDED(`The service is running at http://localhost:45678. Try:\n${LOGIN('http://localhost:45678')}`), stderr: '' });

    expect(await rows('select name, email, role, email_verified_at is not null as verified, deleted_at from users order by id')).toEqual([
      { name: 'Demo Admin', email: 'admin@example.com', role: 'admin', verified: true, deleted_at: null },
      { name: 'Mo Moderator', email: 'moderator@example.com', role: 'moderator', verified: true, deleted_at: null },
      { name: 'Grace Hopper', email: 'grace@example.com', role: 'user', verified: true, deleted_at: null },
      { name: 'Alan Turing', email: 'alan@example.com', role: 'user', verified: true, deleted_at: null },
      { name: 'Barbara Liskov', email: 'barbara@example.com', role: 'user', verified: false, deleted_at: null },
    ]);
    // The printed password really logs in (bcrypt, as the service checks it).
    const [admin] = await rows(`select password from users where email = 'admin@example.com'`);
    expect(await bcrypt.compare('demo-password', admin.password)).toBe(true);

    expect(
      await rows(`select u.email as author, p.title, p.slug, p.published, p.published_at is not null as has_published_at, p.deleted_at is not null as trashed,
        (select count(*) from comments c where c.post_id = p.id)::int as comments
        from posts p join users u on u.id = p.user_id order by p.id`),
    ).toEqual([
      { author: 'grace@example.com', title: 'Hello, world', slug: 'hello-world', published: true, has_published_at: true, trashed: false, comments: 2 },
      { author: 'grace@example.com', title: 'Notes on compilers', slug: 'notes-on-compilers', published: true, has_published_at: true, trashed: false, comments: 1 },
      { author: 'alan@example.com', title: 'Computing machinery and intelligence', slug: 'computing-machinery-and-intelligence', published: true, has_published_at: true, trashed: false, comments: 0 },
      { author: 'alan@example.com', title: 'A draft about morphogenesis', slug: 'a-draft-about-morphogenesis', published: false, has_published_at: false, trashed: false, comments: 0 },
      { author: 'barbara@example.com', title: 'Substitution, explained', slug: 'substitution-explained', published: true, has_published_at: true, trashed: false, comments: 1 },
      { author: 'barbara@example.com', title: 'An old post in the trash', slug: 'an-old-post-in-the-trash', published: true, has_published_at: true, trashed: true, comments: 0 },
    ]);
    // Newest first must show an order: creation times are spread, oldest first in seed order.
    const created = (await rows('select created_at from posts order by id')).map((p) => (p.created_at as Date).getTime());
    expect(created).toEqual([...created].sort((a, b) => a - b));
    expect(new Set(created).size).toBe(created.length);

    expect(await rows('select tenant_id, title from tenant_posts order by id')).toEqual([
      { tenant_id: 1, title: 'Acme: quarterly notes' },
      { tenant_id: 1, title: 'Acme: onboarding' },
      { tenant_id: 2, title: 'Globex: roadmap' },
    ]);
  });

  it('is idempotent: a second run changes nothing and says so', async () => {
    const before = await counts();
    expect(before).toEqual([{ users: 5, posts: 6, comments: 4, tenant_posts: 3 }]);
    expect(script('seed')).toEqual({ code: 0, stdout: 'Demo data already present in DATABASE_URL (admin@example.com exists); nothing done.\n', stderr: '' });
    expect(await counts()).toEqual(before);
  });

  it('without a running service (none, or one that died without removing service.json), names the URL npm start would use', async () => {
    // A process id no process has (above the kernel's pid_max).
    writeFileSync(join(dataDir, 'service.json'), JSON.stringify({ url: 'http://localhost:45678', pid: 2 ** 23 }));
    const r = script('seed', [], await createTestDatabase());
    expect(r).toEqual({ code: 0, stdout: SEEDED(`No service is running on ${dataDir}; start it with npm start (http://localhost:3000 with these settings), then try:\n${LOGIN('http://localhost:3000')}`), stderr: '' });
  });

  it('fails with exit 1 and a message, no stack, when the settings are invalid', () => {
    const r = spawnSync(process.execPath, [join(root, 'dist', 'scripts', 'seed.js')], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', DATABASE_URL: 'not a url' } });
    expect({ code: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 1, stdout: '', stderr: 'Seed failed: Invalid settings:\n  DATABASE_URL: must be a postgres:// URL\n' });
  });
});

describe('npm run set-role -- <email> <role>', () => {
  const roleOf = async (email: string) => (await rows(`select role from users where email = '${email}'`))[0]?.role;

  it('changes the role (email matched trimmed and case-insensitively), exit 0', async () => {
    expect(script('set-role', [' Grace@Example.COM ', 'moderator'])).toEqual({ code: 0, stdout: 'grace@example.com is now moderator\n', stderr: '' });
    expect(await roleOf('grace@example.com')).toBe('moderator');
    expect(script('set-role', ['grace@example.com', 'user'])).toEqual({ code: 0, stdout: 'grace@example.com is now user\n', stderr: '' });
    expect(await roleOf('grace@example.com')).toBe('user');
  });

  it('says when the account is soft-deleted, and still changes it', async () => {
    await db.query(`update users set deleted_at = now() where email = 'barbara@example.com'`);
    try {
      expect(script('set-role', ['barbara@example.com', 'admin'])).toEqual({
        code: 0,
        stdout: 'barbara@example.com is now admin (the account is soft-deleted; restore it to let it log in)\n',
        stderr: '',
      });
      expect(await roleOf('barbara@example.com')).toBe('admin');
    } finally {
      await db.query(`update users set deleted_at = null, role = 'user' where email = 'barbara@example.com'`);
    }
  });

  it('exit 1 for an unknown email, nothing changed', async () => {
    const before = await rows('select id, role from users order by id');
    expect(script('set-role', ['nobody@example.com', 'admin'])).toEqual({ code: 1, stdout: '', stderr: 'No user with email nobody@example.com\n' });
    expect(await rows('select id, role from users order by id')).toEqual(before);
  });

  it.each([
    ['a bad role', ['grace@example.com', 'superuser'], 'Unknown role "superuser": use one of user, admin, moderator\n'],
    ['a role in capitals', ['grace@example.com', 'ADMIN'], 'Unknown role "ADMIN": use one of user, admin, moderator\n'],
    ['no arguments', [], 'usage: npm run set-role -- <email> <role>   (role: user, admin, moderator)\n'],
    ['no role', ['grace@example.com'], 'usage: npm run set-role -- <email> <role>   (role: user, admin, moderator)\n'],
  ])('exit 2 for %s, nothing changed', async (_label, args, stderr) => {
    const before = await rows('select id, role from users order by id');
    expect(script('set-role', args)).toEqual({ code: 2, stdout: '', stderr });
    expect(await rows('select id, role from users order by id')).toEqual(before);
  });
});
