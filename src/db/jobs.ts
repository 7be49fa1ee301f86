import type { MikroORM } from '@mikro-orm/postgresql';
import type { SharedPeriod } from '../core/jobs';
import { runStatement, sql } from './statements';

/**
 * Once per period across every instance on the database: a scheduled run first
 * claims the period in job_runs, in one atomic statement, and only the instance whose claim
 * lands runs. "A period" is 90% of the interval, so that a timer firing a little early on its
 * next tick still finds it due. Between all instances the job runs at most about once per
 * interval, and, while any instance is up, never more than two intervals after its last run
 * (the instances' timers are not aligned). A claimant that dies before finishing loses that
 * period's run; these jobs are cleanups, so the next run does the work.
 */
export function sharedPeriod(orm: MikroORM): SharedPeriod {
  return async (name, periodMs) => {
    const due = Math.round(periodMs * 0.9);
    const rows = await runStatement(orm.em.fork(), sql`insert into job_runs (name, ran_at) values (${name}, now())
       on conflict (name) do update set ran_at = now() where job_runs.ran_at <= now() - interval '1 millisecond' * ${due}
       returning name`);
    return rows.length === 1;
  };
}
