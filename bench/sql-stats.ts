import { Client } from 'pg';
import { procStat } from './processes';

/**
 * Counts the SQL statements the database executed (pg_stat_statements, utility statements such
 * as BEGIN/COMMIT included: each is a round trip). Only one target gets requests at a time, so
 * the count between reset() and total() is that target's, plus the background jobs' statements.
 */
export class SqlStats {
  /** Statements a second that nobody's requests cause (the service's job polling); see calibrate(). */
  backgroundPerSecond = 0;

  /** PostgreSQL's postmaster process (its CPU is read from /proc), or null when not on this machine. */
  postmaster: number | null = null;

  private constructor(private readonly client: Client | null) {}

  /** Counts statements while no load runs (both targets idle). */
  async calibrate(seconds: number): Promise<void> {
    await this.reset();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    this.backgroundPerSecond = ((await this.total()) ?? 0) / seconds;
  }

  static async connect(url: string, enabled: boolean): Promise<SqlStats> {
    if (!enabled) return new SqlStats(null);
    const client = new Client({ connectionString: url });
    client.on('error', () => undefined); // the database is dropped at the end; a late notice must not crash the run
    await client.connect();
    const stats = new SqlStats(client);
    const backend = Number((await client.query('select pg_backend_pid() as pid')).rows[0].pid);
    const ppid = Number(procStat(backend)?.[1]);
    stats.postmaster = Number.isInteger(ppid) && ppid > 1 ? ppid : null;
    return stats;
  }

  async reset(): Promise<void> {
    await this.client?.query('select pg_stat_statements_reset()');
  }

  /** Statements since the last reset in this database, or null when not measurable. */
  async total(): Promise<number | null> {
    if (!this.client) return null;
    const { rows } = await this.client.query(
      `select coalesce(sum(calls), 0)::bigint as n from pg_stat_statements
       where dbid = (select oid from pg_database where datname = current_database())
         and query not ilike '%pg_stat_statements%'`,
    );
    return Number(rows[0].n);
  }

  /** The statements behind the count, most frequent first (for the investigation notes). */
  async top(limit = 8): Promise<{ calls: number; meanMs: number; query: string }[]> {
    if (!this.client) return [];
    const { rows } = await this.client.query(
      `select calls::int, mean_exec_time as mean, query from pg_stat_statements
       where dbid = (select oid from pg_database where datname = current_database())
         and query not ilike '%pg_stat_statements%'
       order by calls desc limit $1`,
      [limit],
    );
    return rows.map((r) => ({ calls: r.calls, meanMs: r.mean, query: String(r.query).replace(/\s+/g, ' ') }));
  }

  async close(): Promise<void> {
    await this.client?.end();
  }
}
