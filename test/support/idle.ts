import type { Client } from 'pg';
import { transactionsIn, type Running } from '../../bench/idle';

/**
 * What an idle service costs the primary, counted as bench/idle.ts idleRate counts it: whole lives
 * of the service, start to stop, because a session that reads no table reports its transactions
 * to pg_stat_database only when it ends (idleRate says more). A life of `settleMs` and one of
 * `settleMs + idleMs`; the difference is what `idleMs` of idleness cost, the start and the stop
 * cancelling out.
 *
 * bench/idle.ts lives them one after the other on one database. Here the two lives run side by
 * side, each on a database of its own (the counts are per database, read over a connection to
 * another one, `admin`): the long life is started first, and the short one lives in its shadow,
 * so a measurement costs one long life rather than a long and a short one.
 */
export interface Lives {
  /** The databases of the short and the long life. */
  short: string;
  long: string;
}

/** One life on `database`: started, left alone for `ms`, stopped; the transactions it cost there. */
async function life(admin: Client, database: string, start: (database: string) => Promise<Running>, whileReady: (running: Running) => Promise<void>): Promise<number> {
  const before = await transactionsIn(admin, database);
  const running = await start(database);
  await whileReady(running);
  await running.stop();
  // Sessions report on exit; the server has them a moment after the client saw the socket close
  // (bench/idle.ts waits the same).
  await new Promise((r) => setTimeout(r, 1_000));
  return (await transactionsIn(admin, database)) - before;
}

const idle = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function idleRateSideBySide(admin: Client, lives: Lives, start: (database: string) => Promise<Running>, o: { settleMs: number; idleMs: number }): Promise<{ transactions: number; perSecond: number; startAndStop: number }> {
  let shortLife: Promise<number> | undefined;
  const long = life(admin, lives.long, start, async () => {
    // The long life is up: the short one starts now, and ends well inside the long one's idleness.
    shortLife = life(admin, lives.short, start, () => idle(o.settleMs));
    shortLife.catch(() => undefined); // awaited below, after the long life
    await idle(o.settleMs + o.idleMs);
  });
  const longCount = await long;
  const short = await shortLife!;
  const transactions = longCount - short;
  return { transactions, perSecond: transactions / (o.idleMs / 1000), startAndStop: short };
}
