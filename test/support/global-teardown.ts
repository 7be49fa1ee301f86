import { rmSync } from 'node:fs';
import type { EmbeddedPostgres } from '../../src/db/embedded';
import type { Pooler } from './pgbouncer';

export default async function globalTeardown(): Promise<void> {
  const handle = (globalThis as Record<string, unknown>).__TEST_PG__ as { pg?: EmbeddedPostgres; dir?: string; pooler?: Pooler; run?: string } | undefined;
  await handle?.pooler?.stop();
  await handle?.pg?.stop();
  if (handle?.dir) rmSync(handle.dir, { recursive: true, force: true });
  if (handle?.run) rmSync(handle.run, { recursive: true, force: true });
}
