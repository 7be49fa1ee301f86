// Types of scripts/test-files.cjs, for test/suite-hygiene.test.ts.
/** The import chain from `file` to a process-starting module (`node:child_process`, `playwright-core`), or null. */
export function processChain(file: string, seen?: Set<string>): string[] | null;
/** Every test file jest runs (`test/**\/*.test.ts`), relative to `root`, sorted. */
export function testFiles(root: string): string[];
/** The test files that start processes of their own: what `npm run test:quick` leaves out. */
export function processFiles(root: string): string[];
/** One pattern for jest's --testPathIgnorePatterns that matches exactly `files`. */
export function exactly(files: string[]): string;
