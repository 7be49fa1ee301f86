import { interruptedNpmTest } from './support/interrupt';

/**
 * `npm test` interrupted mid-run stops everything it started and removes its temporary folders
 * (scripts/test.mjs, test/support/run-cleanup.ts). test/support/interrupt.ts runs two real test
 * files (two jest workers): test/cluster.test.ts, whose `npm start` runs its own PostgreSQL, and
 * test/json-sql.test.ts. Once the test PostgreSQL and that `npm start`'s PostgreSQL both run,
 * npm's pid alone gets SIGTERM (here), or npm's process group SIGINT, what Ctrl-C in a terminal
 * does (test/interrupt-ctrl-c.test.ts). Afterwards no process of it is left (each carries a probe
 * in its environment, whatever its process group or parent) and the TMPDIR it was given is empty.
 */
jest.setTimeout(300_000);

const interrupted = interruptedNpmTest();

/** How the run is interrupted: npm's pid alone. */
const interrupts: [string, NodeJS.Signals, (pid: number) => number][] = [
  ['SIGTERM to npm\'s pid', 'SIGTERM', (pid) => pid],
];

it.each(interrupts)('%s mid-run leaves no process and no temporary folder of npm test', (_how, signal, target) => interrupted(signal, target));
