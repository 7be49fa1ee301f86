import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

/** Debian's Chromium (`apt-get install -y chromium`; .ci/run installs it). */
const CHROMIUM = '/usr/bin/chromium';

/**
 * `describe` when there is a browser to drive, else `describe.skip` with the reason in the title
 * and said once in the run's output.
 */
export function describeInBrowser(file: string, title: string, suite: () => void): void {
  if (existsSync(CHROMIUM)) return describe(title, suite);
  process.stderr.write(`${file} skipped: ${CHROMIUM} is absent (Debian: apt-get install -y chromium)\n`);
  describe.skip(`${title} (skipped: ${CHROMIUM} is absent; apt-get install -y chromium)`, suite);
}

/**
 * Headless Chromium with the flags this closed network needs (no background connections,
 * component updates or sync, which would be refused here); playwright-core is loaded only then.
 */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  let playwright: typeof import('playwright-core');
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- because a missing playwright-core must be told apart (MODULE_NOT_FOUND) from other failures, and suites that skip never load it
    playwright = require('playwright-core') as typeof import('playwright-core');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
    throw new Error(`${CHROMIUM} is installed but playwright-core is not: it is a devDependency (playwright-core@1.65.1); run npm ci`);
  }
  return playwright.chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', ...extraArgs],
  });
}
