import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Where a running service says which URL it listens on: `DATA_DIR/service.json`, written once it
 * listens and removed when it stops, so a script beside it (`npm run seed`) can print a URL that
 * works, whatever PORT the service was given (0 included). The file names the process that wrote
 * it; one left by a process that is gone (a hard kill) is ignored.
 */
const FILE = 'service.json';

interface Announcement {
  url: string;
  pid: number;
}

/** Writes the file (atomically) and returns the function that removes it, if it is still ours. */
export function announceServiceUrl(dataDir: string, url: string): () => void {
  const file = join(dataDir, FILE);
  const pid = process.pid;
  try {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(`${file}.${pid}`, `${JSON.stringify({ url, pid } satisfies Announcement)}\n`);
    renameSync(`${file}.${pid}`, file);
  } catch {
    // A read-only data directory costs the scripts their hint, nothing more.
    return () => undefined;
  }
  return () => {
    if (readServiceFile(dataDir)?.pid === pid) rmSync(file, { force: true });
  };
}

/** The URL of the service running on this data directory, or null when none is. */
export function runningServiceUrl(dataDir: string): string | null {
  const found = readServiceFile(dataDir);
  return found && alive(found.pid) ? found.url : null;
}

function readServiceFile(dataDir: string): Announcement | null {
  try {
    const parsed = JSON.parse(readFileSync(join(dataDir, FILE), 'utf8')) as Partial<Announcement>;
    return typeof parsed.url === 'string' && Number.isInteger(parsed.pid) ? (parsed as Announcement) : null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
