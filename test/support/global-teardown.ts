import { rmSync } from 'node:fs';
import type { EmbeddedPostgres } from '../../src/db/embedded';
import type { Pooler } from './pgbouncer';
import { dropTemplate, TEMPLATE_ENV } from './template-database';

export default async function globalTeardown(): Promise<void> {
  const handle = (globalThis as Record<string, unknown>).__TEST_PG__ as { pg?: EmbeddedPostgres; dir?: string; pooler?: Pooler; run?: string } | undefined;
  await handle?.pooler?.stop();
  // An embedded cluster goes whole below; a server of TEST_DATABASE_URL keeps only what the tests left.
  if (!handle?.pg && process.env.TEST_PG_URL && process.env[TEMPLATE_ENV]) await dropTemplate(process.env.TEST_PG_URL, process.env[TEMPLATE_ENV]);
  await handle?.pg?.stop();
  if (handle?.dir) rmSync(handle.dir, { recursive: true, force: true });
  if (handle?.run) rmSync(handle.run, { recursive: true, force: true });
}
