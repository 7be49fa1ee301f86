import type { EventArgs } from '@mikro-orm/core';
import { BeforeCreate, BeforeUpdate, Entity, Enum, Filter, Index, Property, Unique } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from '../../core/base.entity';
import { hashPassword, isPasswordHash, verifyPassword } from './password';

import { ROLES, type Role } from '../../core/actor';

export { ROLES, type Role };

@Entity({ tableName: 'users' })
@Filter({ name: 'softDelete', cond: { deletedAt: null }, default: true })
export class User extends BaseEntity {
  @Property({ type: 'string', length: 255 })
  name!: string;

  /** Stored trimmed and lower-cased, so the plain unique index is case-insensitive. */
  @Property({ type: 'string', length: 255 })
  @Unique({ name: 'users_email_unique' })
  email!: string;

  /**
   * bcrypt hash. Whatever is assigned (em.create, plain assignment, setPassword) is hashed before
   * it is written (hooks below), so no path can store a plain password. `hidden` keeps it out of
   * any serialisation.
   */
  @Property({ type: 'string', length: 255, hidden: true, lazy: false })
  password!: string;

  @Enum({ items: () => [...ROLES], type: 'string', default: 'user' })
  role: Role = 'user';

  @Property({ type: 'datetime', nullable: true })
  emailVerifiedAt: Date | null = null;

  /** Bumped by every password change; access tokens carry it, so older tokens stop working. */
  @Property({ type: 'integer', default: 0 })
  tokenVersion: number = 0;

  @Property({ type: 'datetime', nullable: true })
  @Index({ name: 'users_deleted_at_index' })
  deletedAt: Date | null = null;

  /**
   * Hashes now (off the event loop), so the flush, often inside a transaction, has nothing slow
   * left to do. Older tokens are revoked when the change is written (onPasswordChange).
   */
  async setPassword(plain: string): Promise<void> {
    this.password = await hashPassword(plain);
  }

  @BeforeCreate()
  async hashNewPassword(): Promise<void> {
    if (!isPasswordHash(this.password)) this.password = await hashPassword(this.password ?? '');
  }

  /** A changed password is hashed if it is not yet, and bumps the token version: older tokens die. */
  @BeforeUpdate()
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
