import type { EntityManager } from '@mikro-orm/postgresql';
import { User, type Role } from '../user/user.entity';
import { Post } from '../post/post.entity';
import { nextFreeSlug, slugify } from '../post/post.slug';
import { Comment } from '../comment/comment.entity';
import { TenantPost } from '../tenant-post/tenant-post.entity';

/**
 * The demo data: what `npm run seed` writes and what the test server's reset loads with
 * `{"fixture":"demo"}`. Five users (password demo-password), six posts (one in the trash),
 * comments, and posts of tenants 1 and 2.
 */
export const DEMO_PASSWORD = 'demo-password';
export const DEMO_ADMIN_EMAIL = 'admin@example.com';

export const DEMO_USERS: { name: string; email: string; role: Role; verified: boolean }[] = [
  { name: 'Demo Admin', email: DEMO_ADMIN_EMAIL, role: 'admin', verified: true },
  { name: 'Mo Moderator', email: 'moderator@example.com', role: 'moderator', verified: true },
  { name: 'Grace Hopper', email: 'grace@example.com', role: 'user', verified: true },
  { name: 'Alan Turing', email: 'alan@example.com', role: 'user', verified: true },
  { name: 'Barbara Liskov', email: 'barbara@example.com', role: 'user', verified: false },
];

export const DEMO_POSTS: { author: string; title: string; body: string; published: boolean; trashed?: boolean; comments?: [string, string][] }[] = [
  { author: 'grace@example.com', title: 'Hello, world', body: 'The first post of the demo blog.', published: true, comments: [['alan@example.com', 'Welcome!'], ['barbara@example.com', 'Nice to see this up.']] },
  { author: 'grace@example.com', title: 'Notes on compilers', body: 'A compiler is a program that translates programs.', published: true, comments: [['alan@example.com', 'Which one do you use?']] },
  { author: 'alan@example.com', title: 'Computing machinery and intelligence', body: 'Can machines think?', published: true },
  { author: 'alan@example.com', title: 'A draft about morphogenesis', body: 'Unpublished thoughts on patterns.', published: false },
  { author: 'barbara@example.com', title: 'Substitution, explained', body: 'Subtypes must be usable where their base types are.', published: true, comments: [['grace@example.com', 'Clear and short.']] },
  { author: 'barbara@example.com', title: 'An old post in the trash', body: 'This one was deleted and waits in the trash.', published: true, trashed: true },
];

export const DEMO_TENANT_POSTS: { tenantId: number; title: string; body: string }[] = [
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

/** Writes the demo data unless its admin already exists (then false): running it twice is harmless. */
export async function seedDemo(em: EntityManager): Promise<boolean> {
  if (await em.findOne(User, { email: DEMO_ADMIN_EMAIL }, { filters: { softDelete: false } })) return false;

  const users = new Map<string, User>();
  for (const u of DEMO_USERS) {
    const user = em.create(User, { name: u.name, email: u.email, role: u.role, password: '', emailVerifiedAt: u.verified ? new Date() : null } as User);
    await user.setPassword(DEMO_PASSWORD);
    users.set(u.email, user);
  }
  await em.flush();

  // Spread creation times so the newest-first order is visible.
  let minutesAgo = DEMO_POSTS.length * 60;
  for (const p of DEMO_POSTS) {
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
  for (const t of DEMO_TENANT_POSTS) em.create(TenantPost, t as TenantPost);
  await em.flush();
  return true;
}
