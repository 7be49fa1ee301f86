import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config/config';
import type { Logger } from '../core/logger';
import type { BackgroundJob } from '../core/jobs';
import { TokenService } from './auth/auth.tokens';
import { TenantPostService } from './tenant-post/tenant-post.service';

/** What the app is built from; main.ts and the tests provide it. */
export interface AppDeps {
  config: Readonly<Config> & { jwtSecret: string };
  orm: MikroORM;
  log: Logger;
}

/** One instance of each service for the whole app; routes and resolvers receive this. */
export interface Services {
  deps: AppDeps;
  tokens: TokenService;
  tenantPosts: TenantPostService;
  /** Periodic work started by main.ts (and by tests that need it). */
  jobs: BackgroundJob[];
}

export function createServices(deps: AppDeps): Services {
  const tokens = new TokenService(deps.config.jwtSecret);
  const jobs: BackgroundJob[] = [];
  return { deps, tokens, jobs, tenantPosts: new TenantPostService() };
}
