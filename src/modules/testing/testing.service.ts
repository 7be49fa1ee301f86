import { randomBytes } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { TokenService } from '../auth/auth.tokens';
import type { CapturedMail, CapturedMails } from '../mail/mail.capture';
import type { MailService } from '../mail/mail.service';
import { seedDemo } from './testing.demo';
import { truncateTables } from './testing.repository';

export const FIXTURES = ['demo'] as const;
export type Fixture = (typeof FIXTURES)[number];

/**
 * Tables a reset keeps: the migrations' own bookkeeping, and the counters whose sum is the
 * version of the public pages (core/http.ts Revalidation). Those only ever grow: emptied, the version
 * would start again from 0 and could meet a version remembered before the reset, and an old page
 * would be taken for current. The reset bumps them instead.
 */
const KEPT = ['mikro_orm_migrations', 'page_versions'];

/**
 * What the throwaway test server adds (`npm run test-server`): a reset between tests and the
 * mails it captured. Never built by `npm start`.
 */
export class TestingService {
  constructor(
    private readonly orm: MikroORM,
    private readonly mail: MailService,
    private readonly captured: CapturedMails,
    private readonly tokens: TokenService,
  ) {}

  /**
   * Every table emptied and every id sequence back at 1, then the fixture if one is named. Also
   * forgotten, since each would leak from one test into the next:
   * - the captured mails;
   * - every token signed so far (a new signing secret): ids restart at 1, so an older token would
   *   otherwise name whoever holds its id now;
   * - the rate limits and the remembered public pages go with their tables (or their version).
   * Open subscriptions stay open: they belong to their clients, which close them.
   */
  async reset(fixture?: Fixture): Promise<void> {
    await this.orm.em.fork().transactional((tx) => truncateTables(tx, KEPT));
    this.tokens.replaceSecret(randomBytes(48).toString('hex'));
    this.captured.clear();
    if (fixture === 'demo') await this.orm.em.fork().transactional((tx) => seedDemo(tx));
  }

  /** Every mail queued so far is delivered first, so one caused by an answered request is listed. */
  async mails(to?: string): Promise<CapturedMail[]> {
    await this.mail.flush();
    return this.captured.list(to);
  }

  clearMails(): void {
    this.captured.clear();
  }
}
