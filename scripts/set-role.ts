import 'reflect-metadata';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../src/config/config';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../src/db/embedded';
import { initOrm, migrate } from '../src/db/orm';
import { ROLES, User, type Role } from '../src/modules/user/user.entity';

/**
 * `npm run set-role -- <email> <role>`: how the first admin is made. Uses DATABASE_URL, else
 * the embedded cluster under DATA_DIR: the running server's when `npm start` holds it (so that
 * server is left alone), otherwise one started for this command and stopped afterwards.
 */
function runningEmbeddedUrl(dataDir: string): string | null {
  const pidFile = join(dataDir, 'postgres', 'postmaster.pid');
  const passwordFile = join(dataDir, 'postgres-password');
  if (!existsSync(pidFile) || !existsSync(passwordFile)) return null;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  try {
    process.kill(Number(lines[0]), 0);
  } catch {
    return null;
  }
  const port = Number(lines[3]);
  if (!port) return null;
  return `postgres://postgres:${readFileSync(passwordFile, 'utf8').trim()}@127.0.0.1:${port}/postgres`;
}

async function main(): Promise<number> {
  const [rawEmail, role] = process.argv.slice(2);
  if (!rawEmail || !role) {
    process.stderr.write(`usage: npm run set-role -- <email> <role>   (role: ${ROLES.join(', ')})\n`);
    return 2;
  }
  if (!(ROLES as readonly string[]).includes(role)) {
    process.stderr.write(`Unknown role "${role}": use one of ${ROLES.join(', ')}\n`);
    return 2;
  }
  const email = rawEmail.trim().toLowerCase();
  const config = loadConfig();

  let embedded: EmbeddedPostgres | undefined;
  let url = config.databaseUrl ?? runningEmbeddedUrl(config.dataDir);
  if (!url) {
    embedded = await startEmbeddedPostgres({ dataDir: config.dataDir });
    url = embedded.url;
  }
  try {
    const orm = await initOrm({ clientUrl: url });
    try {
      await migrate(orm);
      const em = orm.em.fork();
      const user = await em.findOne(User, { email }, { filters: { softDelete: false } });
      if (!user) {
        process.stderr.write(`No user with email ${email}\n`);
        return 1;
      }
      user.role = role as Role;
      await em.flush();
      const note = user.deletedAt ? ' (the account is soft-deleted; restore it to let it log in)' : '';
      process.stdout.write(`${email} is now ${role}${note}\n`);
      return 0;
    } finally {
      await orm.close(true);
    }
  } finally {
    await embedded?.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${err instanceof ConfigError ? err.message : (err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  },
);
