import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { followStart } from './follow-start';
import { builtService } from './service-build';

export interface StartedServer {
  child: ChildProcess;
  output: () => string;
  port: () => number;
  ready: Promise<void>;
  exited: Promise<number | null>;
}

/**
 * The real process, as `npm start` runs it (the run's build, test/support/service-build.ts:
 * dist/src/main.js), with its embedded PostgreSQL under a DATA_DIR of the calling file's own, for
 * test/start*.test.ts. Call it at the top of the file: it registers the hooks that make the
 * folder and, at the end, kill whatever a failed test left running and remove it.
 */
export function builtServerStarts() {
  let root: string;
  let dataDir: string;
  // A test that fails before its SIGTERM must not leave its service running after the suite.
  const children = new Set<ChildProcess>();
  beforeAll(() => {
    root = builtService();
    dataDir = mkdtempSync(join(tmpdir(), 'blog-api-start-'));
    chmodSync(dataDir, 0o755);
  });
  afterAll(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  return {
    dataDir: () => dataDir,

    /**
     * Starts the built server. PORT defaults to 0 (a free port the system picks), read back from the
     * "listening" line: a port guessed by the test could already be taken by another test's socket.
     */
    start(extraEnv: Record<string, string> = {}): StartedServer {
      const child = spawn(process.execPath, [join(root, 'dist', 'src', 'main.js')], {
        env: { ...process.env, NODE_ENV: 'development', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info', DATABASE_URL: '', JWT_SECRET: '', ...extraEnv },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.add(child);
      const { output, port, ready } = followStart(child, 30_000);
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      return { child, output, port, ready, exited };
    },

    /** The embedded cluster's connection, from the files it keeps (password in DATA_DIR, port in postmaster.pid). */
    clusterClient(): Client {
      const cluster = realpathSync(join(dataDir, 'postgres'));
      const port = Number(readFileSync(join(cluster, 'postmaster.pid'), 'utf8').split('\n')[3]);
      const password = readFileSync(join(dataDir, 'postgres-password'), 'utf8').trim();
      return new Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' });
    },

    postgresRunning(): boolean {
      const cluster = realpathSync(join(dataDir, 'postgres'));
      return spawnSync('pgrep', ['-f', `postgres -D ${cluster}`]).status === 0;
    },
  };
}
