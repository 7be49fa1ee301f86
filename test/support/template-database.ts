import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { migrateDatabase } from '../../src/db/orm';

/**
 * The run's migrated template database. global-setup.ts creates it once, in the run's
 * PostgreSQL, and migrates it as the service would (src/db/orm.ts migrateDatabase); every test
 * file's database is then a copy of it (`CREATE DATABASE ... TEMPLATE`, harness.ts
 * createTestDatabase): its own data, without paying for its own migrations. A copy takes a few
 * milliseconds; the migrations, an ORM of their own and eight files of DDL, took about a second
 * of each file's time.
 *
 * Nothing connects to it once it is made: PostgreSQL refuses to copy a database that has
 * sessions, so it is also closed to connections.
 */
export const TEMPLATE_ENV = 'TEST_PG_TEMPLATE';

/** `base` (a URL of the server) naming `database` instead. */
export function withDatabase(base: string, database: string): string {
  const url = new URL(base);
  url.pathname = `/${database}`;
  return url.toString();
}

async function admin<T>(base: string, work: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: base });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates and migrates the run's template on the server at `base`; returns its name. */
export async function createTemplate(base: string): Promise<string> {
  // A name of this run's own: TEST_DATABASE_URL may be a server that other runs use too.
  const name = `t_template_${randomBytes(4).toString('hex')}`;
  await admin(base, (c) => c.query(`create database ${name}`));
  await migrateDatabase(withDatabase(base, name));
  await admin(base, (c) => c.query(`alter database ${name} with allow_connections false`));
  return name;
}

/** Drops the template (a TEST_DATABASE_URL server outlives the run; an embedded one is removed whole). */
export async function dropTemplate(base: string, name: string): Promise<void> {
  await admin(base, (c) => c.query(`drop database if exists ${name}`));
}
