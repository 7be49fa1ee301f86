import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded';

/**
 * One PostgreSQL for the whole run: TEST_DATABASE_URL when given (it needs CREATEDB), else an
 * embedded cluster in a fresh temporary folder. Each test file creates its own database in it.
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.TEST_DATABASE_URL) {
    process.env.TEST_PG_URL = process.env.TEST_DATABASE_URL;
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'blog-api-test-'));
  chmodSync(dir, 0o755); // as root, PostgreSQL runs as `postgres`, who must reach the cluster
  const pg: EmbeddedPostgres = await startEmbeddedPostgres({ dataDir: dir });
  process.env.TEST_PG_URL = pg.url;
  (globalThis as Record<string, unknown>).__TEST_PG__ = { pg, dir };
}
