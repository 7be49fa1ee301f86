import { PasswordResetToken } from '../modules/auth/password-reset-token.entity';
import { Comment } from '../modules/comment/comment.entity';
import { OutboxMail } from '../modules/mail/mail.entity';
import { Post } from '../modules/post/post.entity';
import { TenantPost } from '../modules/tenant-post/tenant-post.entity';
import { User } from '../modules/user/user.entity';
import { RateAttempt, RateLimitCounter } from './rate-limit.entity';
import { JobRun } from './job-run.entity';
import { PageVersion } from './page-version.entity';
import { IdempotencyKey } from '../modules/idempotency/idempotency.entity';

/** Listed explicitly: no folder scanning, so the same list works from src/ (tests) and dist/ (start). */
export const entities = [User, PasswordResetToken, Post, Comment, TenantPost, OutboxMail, RateLimitCounter, RateAttempt, JobRun, PageVersion, IdempotencyKey];
