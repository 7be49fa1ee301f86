import { clusterClient, freshCopy, leftovers, npmStart, stopLeftovers, type Copy, type Started } from './npm-start';

/**
 * What the files about `npm start` under a supervisor share (test/supervisor*.test.ts): a fresh
 * copy of the project per file, whose leftovers a failed test does not hand to the next one, and
 * the steps the tests are written in. Call `supervisedCopy` at the top of the file: it registers
 * the hooks.
 */
export function supervisedCopy(prefix: string) {
  let copy: Copy;
  // A failed test must not hand its running server to the next one.
  afterEach(() => stopLeftovers(copy));
  beforeAll(() => (copy = freshCopy(prefix)));
  afterAll(() => {
    for (const p of leftovers(copy)) try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone */ }
    copy.remove();
  });

  return {
    copy: () => copy,

    async startReady(env: Record<string, string> = {}): Promise<Started> {
      const s = npmStart(copy, env);
      await s.ready;
      return s;
    },

    async insertUser(email: string): Promise<void> {
      const db = clusterClient(copy);
      await db.connect();
      await db.query(`insert into users (name, email, password, created_at, updated_at) values ('Kept', $1, 'x', now(), now())`, [email]);
      await db.end();
    },

    async userExists(email: string): Promise<boolean> {
      const db = clusterClient(copy);
      await db.connect();
      const { rows } = await db.query('select 1 from users where email = $1', [email]);
      await db.end();
      return rows.length === 1;
    },

    async stopCleanly(s: Started): Promise<void> {
      s.npm.kill('SIGTERM');
      expect(await s.exited).toEqual({ code: 0, signal: null });
      expect(leftovers(copy)).toEqual([]);
    },
  };
}
