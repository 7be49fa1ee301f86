import { randomBytes } from 'node:crypto';
import type { TestApp } from './harness';
import { User, type Role } from '../../src/modules/user/user.entity';

export const uniqueEmail = (prefix = 'user') => `${prefix}-${randomBytes(5).toString('hex')}@example.test`;

/** A user written straight to the database, with a valid access token. Password: `password123`. */
export async function buildUser(app: TestApp, attrs: { role?: Role; name?: string; email?: string; verified?: boolean } = {}) {
  const em = app.orm.em.fork();
  const user = em.create(User, {
    name: attrs.name ?? 'Test User',
    email: attrs.email ?? uniqueEmail(),
    role: attrs.role ?? 'user',
    password: '',
    emailVerifiedAt: attrs.verified ? new Date() : null,
  } as User);
  await user.setPassword('password123');
  await em.flush();
  return { user, token: app.built.services.tokens.signAccess(user), password: 'password123' };
}
