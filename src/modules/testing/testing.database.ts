import type { MikroORM } from '@mikro-orm/postgresql';

/**
 * The test server on DATABASE_URL: the database must be empty when it starts (it migrates it and
 * its reset empties every table), and it is left as it was found when it stops.
 */
const RELATIONS = `select c.oid from pg_class c where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p', 'v', 'm', 'S', 'f')`;
const FUNCTIONS = `select p.oid from pg_proc p where p.pronamespace = current_schema()::regnamespace`;

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
  const found = await em.execute<{ name: string }[]>(`select c.oid::regclass::text as name from (${RELATIONS}) r join pg_class c using (oid) order by 1 limit 5`);
  if (found.length) throw new Error(`DATABASE_URL must point at an empty database; its schema holds ${found.map((r) => r.name).join(', ')}${found.length === 5 ? ', …' : ''}`);
  const functions = await em.execute<{ oid: number }[]>(FUNCTIONS);
  return { functions: new Set(functions.map((f) => Number(f.oid))) };
}

/**
 * Drops what the test server created there: every table, view and sequence, and the new functions.
 * @public loaded by src/test-server.ts with a lazy require, which knip cannot follow.
 */
export async function removeCreated(orm: MikroORM, before: FoundDatabase): Promise<void> {
  const em = orm.em.fork();
  await em.transactional(async (tx) => {
    const tables = await tx.execute<{ name: string }[]>(`select oid::regclass::text as name from pg_class where relnamespace = current_schema()::regnamespace and relkind in ('r', 'p')`);
    if (tables.length) await tx.execute(`drop table if exists ${tables.map((t) => t.name).join(', ')} cascade`);
    const rest = await tx.execute<{ name: string; kind: string }[]>(`select oid::regclass::text as name, relkind as kind from pg_class where relnamespace = current_schema()::regnamespace and relkind in ('v', 'm', 'S')`);
    for (const r of rest) await tx.execute(`drop ${r.kind === 'S' ? 'sequence' : r.kind === 'm' ? 'materialized view' : 'view'} if exists ${r.name} cascade`);
    const functions = await tx.execute<{ oid: number; sig: string }[]>(`select oid, oid::regprocedure::text as sig from pg_proc where pronamespace = current_schema()::regnamespace`);
    for (const f of functions) if (!before.functions.has(Number(f.oid))) await tx.execute(`drop function if exists ${f.sig} cascade`);
  });
}
