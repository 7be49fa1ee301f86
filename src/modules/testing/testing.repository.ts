import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { runStatement, sql, type Statement } from '../../db/statements';

/**
 * The test server's statements (`npm run test-server`): its reset, and its database on
 * DATABASE_URL, which must be empty when it starts (it migrates it and its reset empties every
 * table) and is left as it was found when it stops. Names of tables, views and functions come
 * from the catalog, quoted by PostgreSQL, into DDL, which takes no parameters. The SQL of each is
 * in testing.repository.sql (npm run sql).
 */
const ddl = (text: string): Statement => ({ sql: text, params: [] });

/**
 * Every table but `kept` emptied and its sequences back at 1, and the public pages' version
 * bumped (page_versions only ever grows: core/http.ts Revalidation), in the transaction `tx`.
 */
export async function truncateTables(tx: EntityManager, kept: readonly string[]): Promise<void> {
  const rows = await runStatement<{ name: string }>(tx, sql`select quote_ident(tablename) as name from pg_tables where schemaname = current_schema() and tablename <> all(${kept}::text[]) order by 1`);
  if (rows.length) await runStatement(tx, ddl(`truncate table ${rows.map((r) => r.name).join(', ')} restart identity cascade`));
  await runStatement(tx, sql`update page_versions set v = v + 1`);
}

export interface FoundDatabase {
  /** Functions already there (an extension's, say): not ours to drop. */
  functions: Set<number>;
}

/**
 * Throws (with what it found) unless the schema holds no table, view or sequence.
 * @public loaded by src/test-server.ts with a lazy require, which knip cannot follow.
 */
export async function requireEmptyDatabase(orm: MikroORM): Promise<FoundDatabase> {
  const em = orm.em.fork();
  const found = await runStatement<{ name: string }>(em, sql`select c.oid::regclass::text as name from pg_class c
    where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p', 'v', 'm', 'S', 'f') order by 1 limit 5`);
  if (found.length) throw new Error(`DATABASE_URL must point at an empty database; its schema holds ${found.map((r) => r.name).join(', ')}${found.length === 5 ? ', …' : ''}`);
  const functions = await runStatement<{ oid: number }>(em, sql`select p.oid from pg_proc p where p.pronamespace = current_schema()::regnamespace`);
  return { functions: new Set(functions.map((f) => Number(f.oid))) };
}

/**
 * Drops what the test server created there: every table, view and sequence, and the new functions.
 * @public loaded by src/test-server.ts with a lazy require, which knip cannot follow.
 */
export async function removeCreated(orm: MikroORM, before: FoundDatabase): Promise<void> {
  await orm.em.fork().transactional(async (tx) => {
    const tables = await runStatement<{ name: string }>(tx, sql`select oid::regclass::text as name from pg_class where relnamespace = current_schema()::regnamespace and relkind in ('r', 'p') order by 1`);
    if (tables.length) await runStatement(tx, ddl(`drop table if exists ${tables.map((t) => t.name).join(', ')} cascade`));
    const rest = await runStatement<{ name: string; kind: string }>(tx, sql`select oid::regclass::text as name, relkind as kind from pg_class where relnamespace = current_schema()::regnamespace and relkind in ('v', 'm', 'S') order by 1`);
    for (const r of rest) await runStatement(tx, ddl(`drop ${r.kind === 'S' ? 'sequence' : r.kind === 'm' ? 'materialized view' : 'view'} if exists ${r.name} cascade`));
    const functions = await runStatement<{ oid: number; sig: string }>(tx, sql`select oid, oid::regprocedure::text as sig from pg_proc where pronamespace = current_schema()::regnamespace order by 2`);
    for (const f of functions) if (!before.functions.has(Number(f.oid))) await runStatement(tx, ddl(`drop function if exists ${f.sig} cascade`));
  });
}
