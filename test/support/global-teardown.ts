import { rmSync } from 'node:fs';
import type { EmbeddedPostgres } from '../../src/db/embedded';

export default async function globalTeardown(): Promise<void> {
  const handle = (globalThis as Record<string, unknown>).__TEST_PG__ as { pg: EmbeddedPostgres; dir: string } | undefined;
  if (!handle) return;
  await handle.pg.stop();
  rmSync(handle.dir, { recursive: true, force: true });
}
