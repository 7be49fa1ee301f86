import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig, type OrmOptions } from '../../mikro-orm.config';
import { installReadRouting } from './replicas';

/** `replicaMaxLagMs`: how far behind a replica may be and still serve reads (REPLICA_MAX_LAG_MS). */
export async function initOrm(options: OrmOptions & { replicaMaxLagMs?: number }): Promise<MikroORM> {
  const orm = await MikroORM.init(ormConfig(options));
  await installReadRouting(orm, options.replicaMaxLagMs ?? 1000);
  return orm;
}

/** One process migrates at a time (several instances, parallel test workers); the rest wait, then find nothing to do. */
export async function migrate(orm: MikroORM): Promise<void> {
  const knex = orm.em.getConnection().getKnex();
  await knex.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(?)', [4711_0001]);
    await orm.getMigrator().up();
  });
}
