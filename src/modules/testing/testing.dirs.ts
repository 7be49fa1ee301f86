import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alive } from '../../db/postmaster';

/**
 * The test server's temporary directories. Each names its process (`owner.pid`); a stop removes
 * its own. One whose process was killed outright (SIGKILL: no cleanup runs) is removed by the next
 * test server to start, once neither that process nor its PostgreSQL is alive.
 */
export const TEST_SERVER_DIR_PREFIX = 'blog-api-test-server-';
const OWNER = 'owner.pid';

export function writeOwner(dir: string): void {
  writeFileSync(join(dir, OWNER), String(process.pid));
}


function pidIn(file: string): number {
  try {
    return Number(readFileSync(file, 'utf8').split('\n')[0].trim());
  } catch {
    return NaN;
  }
}

export function sweepTestServerDirs(): void {
  let names: string[];
  try {
    names = readdirSync(tmpdir()).filter((n) => n.startsWith(TEST_SERVER_DIR_PREFIX));
  } catch {
    return;
  }
  for (const name of names) {
    const dir = join(tmpdir(), name);
    const owner = pidIn(join(dir, OWNER));
    // No owner file yet: a server that is just starting. A live owner or postmaster: in use.
    if (Number.isNaN(owner) || alive(owner) || alive(pidIn(join(dir, 'postgres', 'postmaster.pid')))) continue;
    rmSync(dir, { recursive: true, force: true });
  }
}
