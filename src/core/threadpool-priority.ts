import { readdirSync } from 'node:fs';
import { access } from 'node:fs/promises';
import { setPriority } from 'node:os';

/**
 * Lowers the scheduling priority of libuv's thread pool (where bcrypt hashes and compares run)
 * below the event loop's. On a machine with fewer cores than pool threads (2 cores, 4 threads
 * here), a login storm otherwise shares the CPU evenly between four hashes and the event loop,
 * and every other request waits its turn: GET /posts p99 went from 65 to 175 ms during 8 parallel
 * logins (npm run bench). Niced threads still take all CPU nobody else wants, so logins alone run
 * as fast as before. Linux only: there a thread is a task whose priority can be set on its own.
 *
 * libuv starts the whole pool on its first job, so the tasks that appear across one job are the
 * pool. Must run before anything else uses the pool; `false` when it could not tell or set.
 */
export async function niceThreadPool(nice: number): Promise<boolean> {
  if (process.platform !== 'linux' || nice === 0) return false;
  const tasks = () => new Set(readdirSync('/proc/self/task'));
  const before = tasks();
  await access('.'); // any pool job
  const pool = [...tasks()].filter((t) => !before.has(t));
  if (!pool.length) return false; // the pool was already running: we cannot tell its threads apart
  try {
    for (const tid of pool) setPriority(Number(tid), nice);
    return true;
  } catch {
    return false;
  }
}
