import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/**
 * One outstanding reset secret per email (the email is the primary key, as the spec says).
 * `token` holds the SHA-256 of the emailed 64-hex secret, never the secret itself.
 */
@Entity({ tableName: 'password_reset_tokens' })
export class PasswordResetToken {
  @PrimaryKey({ type: 'string', length: 255 })
  email!: string;

  @Property({ type: 'string', length: 64 })
  @Index({ name: 'password_reset_tokens_token_index' })
  token!: string;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}
