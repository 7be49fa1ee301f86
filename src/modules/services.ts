import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config/config';
import type { Logger } from '../core/logger';
import type { BackgroundJob } from '../core/jobs';
import { RateLimiter } from '../db/rate-limit';
import { AuthService } from './auth/auth.service';
import { TokenService } from './auth/auth.tokens';
import { CommentService } from './comment/comment.service';
import { IdempotencyService, idempotencyExpiryJob } from './idempotency/idempotency.service';
import { MailService } from './mail/mail.service';
import type { CapturedMails } from './mail/mail.capture';
import { PostService } from './post/post.service';
import { TenantPostService } from './tenant-post/tenant-post.service';
import { TrashService, trashRetentionJob } from './trash/trash.service';
import { UserService } from './user/user.service';

/** What the app is built from; main.ts and the tests provide it. */
export interface AppDeps {
  config: Readonly<Config> & { jwtSecret: string };
  orm: MikroORM;
  log: Logger;
  /** The test server's in-memory mailbox: when set, mails are captured there, not sent. */
  mailCapture?: CapturedMails;
}

/** One instance of each service for the whole app; routes and resolvers receive this. */
export interface Services {
  deps: AppDeps;
  tokens: TokenService;
  limits: RateLimiter;
  mail: MailService;
  auth: AuthService;
  users: UserService;
  posts: PostService;
  comments: CommentService;
  trash: TrashService;
  /** The trash retention job (also in `jobs`); tests call its runNow(). */
  trashRetention: ReturnType<typeof trashRetentionJob>;
  tenantPosts: TenantPostService;
  idempotency: IdempotencyService;
  /** The expiry of Idempotency-Keys (also in `jobs`); tests call its runNow(). */
  idempotencyExpiry: ReturnType<typeof idempotencyExpiryJob>;
  /** Periodic work started by main.ts (and by tests that need it). */
  jobs: BackgroundJob[];
}

export function createServices(deps: AppDeps): Services {
  const tokens = new TokenService(deps.config.jwtSecret);
  const limits = new RateLimiter();
  const mail = new MailService(deps.orm, deps.config, deps.log, deps.mailCapture);
  const idempotencyExpiry = idempotencyExpiryJob(deps.orm, deps.log);
  const trashRetention = trashRetentionJob(deps.orm, deps.config.trashRetentionDays, deps.log, deps.config.trashRetentionFirstRunMs);
  return {
    deps,
    tokens,
    limits,
    mail,
    auth: new AuthService(deps.config, tokens, limits, mail),
    users: new UserService(),
    posts: new PostService(),
    comments: new CommentService(),
    trash: new TrashService(),
    trashRetention,
    tenantPosts: new TenantPostService(),
    idempotency: new IdempotencyService(deps.config.idempotencyKeyHours),
    idempotencyExpiry,
    jobs: [mail.job, mail.cleanup, limits.cleanupJob(deps.orm, deps.log), trashRetention, idempotencyExpiry],
  };
}
