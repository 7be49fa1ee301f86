import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig, type OrmOptions } from '../../mikro-orm.config';

export async function initOrm(options: OrmOptions): Promise<MikroORM> {
  return MikroORM.init(ormConfig(options));
}

/** One process migrates at a time (several instances, parallel test workers); the rest wait, then find nothing to do. */
export async function migrate(orm: MikroORM): Promise<void> {
  const knex = orm.em.getConnection().getKnex();
  await knex.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(?)', [4711_0001]);
    await orm.getMigrator().up();
  });
}
