import { interruptedNpmTest } from './support/interrupt';

/**
 * `npm test` interrupted mid-run as a terminal's Ctrl-C does it: SIGINT to npm's whole process
 * group. Everything it started stops and its temporary folders are removed, as after a SIGTERM to
 * npm's pid alone (test/interrupt.test.ts, which says how the run is watched).
 */
jest.setTimeout(300_000);

const interrupted = interruptedNpmTest();

/** How the run is interrupted: its whole foreground group, as a terminal's Ctrl-C does. */
const interrupts: [string, NodeJS.Signals, (pid: number) => number][] = [
  ['Ctrl-C (SIGINT to npm\'s process group)', 'SIGINT', (pid) => -pid],
];

it.each(interrupts)('%s mid-run leaves no process and no temporary folder of npm test', (_how, signal, target) => interrupted(signal, target));
