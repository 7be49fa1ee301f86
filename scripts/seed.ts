import 'reflect-metadata';
import { loadConfig, ConfigError } from '../src/config/config';
import { startEmbeddedPostgres, EmbeddedPostgresError, type EmbeddedPostgres } from '../src/db/embedded';
import { initOrm, migrate } from '../src/db/orm';
import { DEMO_ADMIN_EMAIL as ADMIN_EMAIL, DEMO_PASSWORD as PASSWORD, DEMO_POSTS as POSTS, DEMO_TENANT_POSTS as TENANT_POSTS, DEMO_USERS as USERS, seedDemo } from '../src/modules/testing/testing.demo';
import { setBcryptCost } from '../src/modules/user/password';
import { runningServiceUrl } from '../src/core/service-url';

/**
 * `npm run seed`: demo data in the database `npm start` uses (DATABASE_URL, else the embedded
 * PostgreSQL under DATA_DIR). Skips everything when the demo admin already exists, so running it
 * twice is harmless. A running `npm start` may keep running: the seed then uses that server's
 * embedded cluster instead of starting one (startEmbeddedPostgres adopts it and leaves it up), and
 * prints the URL that server says it listens on (DATA_DIR/service.json), whatever its PORT.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  setBcryptCost(config.bcryptCost);
  let embedded: EmbeddedPostgres | undefined;
  let url = config.databaseUrl;
  if (!url) {
    embedded = await startEmbeddedPostgres({ dataDir: config.dataDir });
    url = embedded.url;
  }
  const orm = await initOrm({ clientUrl: url });
  try {
    await migrate(orm);
    // One transaction: a seed that fails halfway leaves nothing, so the next run (which skips
    // whenever the admin exists) does not mistake half the data for all of it.
    const created = await orm.em.fork().transactional((em) => seedDemo(em));
    const where = config.databaseUrl ? 'DATABASE_URL' : `the embedded database in ${config.dataDir}`;
    if (!created) {
      process.stdout.write(`Demo data already present in ${where} (${ADMIN_EMAIL} exists); nothing done.\n`);
    } else {
      const width = Math.max(...USERS.map((u) => u.email.length));
      const running = runningServiceUrl(config.dataDir);
      const url = running ?? `http://localhost:${config.port}`;
      process.stdout.write(
        `Seeded ${where}: ${USERS.length} users, ${POSTS.length} posts (one in the trash), comments, ${TENANT_POSTS.length} posts of tenants 1 and 2.\n\n` +
          `Log in with any of these (password: ${PASSWORD}):\n` +
          USERS.map((u) => `  ${u.email.padEnd(width)}  ${u.role}${u.verified ? '' : ' (unverified)'}`).join('\n') +
          '\n\n' +
          (running ? `The service is running at ${url}. Try:\n` : `No service is running on ${config.dataDir}; start it with npm start (${url} with these settings), then try:\n`) +
          `  curl -s -X POST ${url}/auth/login -H 'content-type: application/json' -d '{"email":"${ADMIN_EMAIL}","password":"${PASSWORD}"}'\n`,
      );
    }
  } finally {
    await orm.close(true);
    await embedded?.stop();
  }
}

main().catch((err) => {
  const known = err instanceof ConfigError || err instanceof EmbeddedPostgresError;
  process.stderr.write(`Seed failed: ${known ? err.message : (err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
