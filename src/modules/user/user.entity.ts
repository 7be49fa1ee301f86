import { defineEntity, p, type EventArgs } from '@mikro-orm/core';
import { baseProperties } from '../../core/base.entity';
import { hashPassword, isPasswordHash, verifyPassword } from './password';

import { ROLES, type Role } from '../../core/actor';

export { ROLES, type Role };

export const UserSchema = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    ...baseProperties,
    name: p.string().length(255),
    /** Stored trimmed and lower-cased, so the plain unique index is case-insensitive. */
    email: p.string().length(255).unique('users_email_unique'),
    /**
     * bcrypt hash. Whatever is assigned (em.create, plain assignment, setPassword) is hashed before
     * it is written (hooks below), so no path can store a plain password. `hidden` keeps it out of
     * any serialisation, and out of every shape (core/shape.ts refuses it).
     */
    password: p.string().length(255).hidden(),
    role: p.enum(ROLES).default('user'),
    emailVerifiedAt: p.datetime().strictNullable(),
    /** Bumped by every password change; access tokens carry it, so older tokens stop working. */
    tokenVersion: p.integer().default(0),
    deletedAt: p.datetime().strictNullable().index('users_deleted_at_index'),
  },
  filters: { softDelete: { name: 'softDelete', cond: { deletedAt: null }, default: true } },
});

export class User extends UserSchema.class {
  /**
   * Hashes now (off the event loop), so the flush, often inside a transaction, has nothing slow
   * left to do. Older tokens are revoked when the change is written (onPasswordChange).
   */
  async setPassword(plain: string): Promise<void> {
    this.password = await hashPassword(plain);
  }

  /** beforeCreate: a password not hashed yet is hashed. */
  async hashNewPassword(): Promise<void> {
    if (!isPasswordHash(this.password)) this.password = await hashPassword(this.password ?? '');
  }

  /** beforeUpdate: a changed password is hashed if it is not yet, and bumps the token version: older tokens die. */
  async onPasswordChange(args: EventArgs<User>): Promise<void> {
    if (args.changeSet?.payload.password === undefined) return;
    if (!isPasswordHash(this.password)) this.password = await hashPassword(this.password ?? '');
    this.tokenVersion = (this.tokenVersion ?? 0) + 1;
  }

  checkPassword(plain: string): Promise<boolean> {
    return verifyPassword(plain, this.password);
  }

  get isAdmin(): boolean {
    return this.role === 'admin';
  }
  get isModerator(): boolean {
    return this.role === 'admin' || this.role === 'moderator';
  }
  get isVerified(): boolean {
    return this.emailVerifiedAt !== null;
  }
  get isTrashed(): boolean {
    return this.deletedAt !== null;
  }
}
UserSchema.setClass(User);
UserSchema.addHook('beforeCreate', (args: EventArgs<User>) => args.entity.hashNewPassword());
UserSchema.addHook('beforeUpdate', (args: EventArgs<User>) => args.entity.onPasswordChange(args));
