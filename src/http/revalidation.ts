import type { MikroORM } from '@mikro-orm/postgresql';
import { dataVersion } from '../db/list-totals';
import { matches } from './caching';

/**
 * 304 without building the page, when nothing it shows has changed.
 *
 * A public read's tag is its body's hash (http/caching.ts), so a revalidation normally rebuilds
 * the page to compare. This remembers, per page (URL, and media type for GraphQL), the tag it
 * last answered and the version of the data (posts, comments, users) read just BEFORE that page
 * was built. When a revalidation finds the same version and that tag in If-None-Match, no
 * transaction committed a change since the page was built, so the page is still that tag: 304
 * after one small statement instead of the page's own.
 *
 * - Reading the version before the page is what makes it safe: a change committed in between is
 *   in the page but not in the remembered version, so the next revalidation just rebuilds.
 * - Only revalidations pay the extra statement; a full answer costs what it did.
 * - Per process, at most `max` pages (least recently answered dropped first); another instance
 *   keeps its own, so a revalidation there rebuilds once, with the same tag.
 * - Not used with read replicas: a page read on a replica may be older than the version read
 *   on the primary, and would then be taken for current.
 */
export class Revalidation {
  private readonly pages = new Map<string, { tag: string; version: string }>();

  constructor(
    private readonly orm: MikroORM,
    private readonly max = 10_000,
  ) {}

  /** The current version of the data (db/list-totals.ts: one statement on 16 rows). */
  version(): Promise<string> {
    return dataVersion(this.orm.em);
  }

  /**
   * For a revalidation of page `key`: the tag to answer 304 with, without building the page; or
   * the version to remember the page under once it is built.
   */
  async check(key: string, ifNoneMatch: string): Promise<{ notModified: string } | { version: string }> {
    const version = await this.version();
    const known = this.pages.get(key);
    if (known && known.version === version && matches(ifNoneMatch, known.tag)) return { notModified: known.tag };
    return { version };
  }

  /** The page `key` answered `tag`, built after reading `version`. */
  remember(key: string, tag: string, version: string): void {
    this.pages.delete(key);
    if (this.pages.size >= this.max) this.pages.delete(this.pages.keys().next().value!);
    this.pages.set(key, { tag, version });
  }

  get size(): number {
    return this.pages.size;
  }
}
