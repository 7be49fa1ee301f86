import type { ChildProcess } from 'node:child_process';
import { createHash, randomInt } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOpenApiDocument } from '../../src/openapi/document';
import { REQUEST_BODIES } from '../../src/openapi/request-bodies';
import { run as runIn, type RunResult } from './run';
import { RUN_MARKER } from './run-cleanup';
import { until } from './wait';

/**
 * What the test files about examples/ (the typed clients, a package of its own) share:
 * test/examples.test.ts (regeneration, manifest, type check), examples-mock (Prism's mock server),
 * examples-service (the clients against `npm start` with trusted documents, Prism's validating
 * proxy) and examples-plain (a plain `npm start`, `npm run test-server`).
 *
 * examples/ is prepared once per run by `preparedExamples()`, whichever of those files asks first
 * (the others wait for it): its dependencies installed, both clients regenerated in place, then
 * built by its tsc. Regeneration rewrites files tsc reads, so the two never run at the same time,
 * and every file runs the examples from one build. Each step's outcome is kept for
 * test/examples.test.ts to assert on.
 */
const root = join(__dirname, '..', '..');
export const examples = join(root, 'examples');
export const bin = (...path: string[]) => join(examples, 'node_modules', ...path);
/** Preloaded (`--require`) by every tool that must not reach the network. */
export const guard = join(__dirname, 'no-network.cjs');
export const manifest = join(examples, 'graphql', 'src', 'gql', 'persisted-documents.json');

/** `run` in examples/ unless told otherwise. */
export const run = (command: string, args: string[], opts: Parameters<typeof runIn>[2] = {}) => runIn(command, args, { cwd: examples, ...opts });

/** Fails with the command's output when it did not exit 0. */
async function ok(what: string, command: string, args: string[], opts: Parameters<typeof run>[2] = {}) {
  const r = await run(command, args, opts);
  if (r.code !== 0) throw new Error(`${what} exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
  return r;
}

/** Every generated file, by path under examples/: what a regeneration must reproduce byte for byte. */
function generated(): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const gql = join(examples, 'graphql', 'src', 'gql');
  if (existsSync(gql)) for (const name of readdirSync(gql).sort()) files.set(`graphql/src/gql/${name}`, readFileSync(join(gql, name)));
  for (const path of ['rest/openapi.json', 'rest/src/api.d.ts']) if (existsSync(join(examples, path))) files.set(path, readFileSync(join(examples, path)));
  return files;
}

/** rest/openapi.json as examples/scripts/fetch-openapi.mjs writes it from a running service. */
export const openApiCopy = (doc: unknown) => JSON.stringify(doc, null, 2) + '\n';

/** The last line an example prints: its JSON summary. */
export const summaryOf = (stdout: string) => JSON.parse(stdout.trim().split('\n').pop()!);

/** What preparing examples/ found, step by step. */
export interface PreparedExamples {
  /** The generated files before the regeneration (paths under examples/). */
  generatedBefore: string[];
  /** Those a regeneration changed, added or removed; empty when the committed output is current. */
  changed: string[];
  /** Why the regeneration itself failed (a generator's exit and output), else null. */
  regenerationError: string | null;
  /** examples/' tsc (`tsc -p tsconfig.json`, which also builds dist/). */
  tsc: RunResult;
}

/** npm ci in examples/, only when examples/node_modules is missing or was installed from another lock file. */
async function install(): Promise<void> {
  const lock = createHash('sha256').update(readFileSync(join(examples, 'package.json'))).update(readFileSync(join(examples, 'package-lock.json'))).digest('hex');
  const stamp = join(examples, 'node_modules', '.installed-from');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === lock) return;
  await ok('npm ci in examples/', 'npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], { timeoutMs: 240_000 });
  writeFileSync(stamp, lock);
}

/**
 * Both clients regenerated without a network, in place: GraphQL Code Generator's client preset
 * from schema/schema.graphql, openapi-typescript from rest/openapi.json, itself the service's
 * OpenAPI document. The regenerated files are left in place: commit them if the change is meant.
 */
async function regenerate(): Promise<Pick<PreparedExamples, 'generatedBefore' | 'changed' | 'regenerationError'>> {
  const before = generated();
  try {
    writeFileSync(join(examples, 'rest', 'openapi.json'), openApiCopy(buildOpenApiDocument()));
    const env = { ...process.env, NO_COLOR: '1' };
    await ok('graphql-codegen', process.execPath, ['--require', guard, bin('@graphql-codegen', 'cli', 'cjs', 'bin.js'), '--config', 'codegen.ts', '--silent'], { env });
    await ok('openapi-typescript', process.execPath, ['--require', guard, bin('openapi-typescript', 'bin', 'cli.js'), 'rest/openapi.json', '--output', 'rest/src/api.d.ts'], { env });
  } catch (err) {
    return { generatedBefore: [...before.keys()], changed: [], regenerationError: (err as Error).message };
  }
  const after = generated();
  const changed = [...new Set([...before.keys(), ...after.keys()])].filter((f) => !before.get(f)?.equals(after.get(f) ?? Buffer.alloc(0)) || !after.has(f));
  return { generatedBefore: [...before.keys()], changed, regenerationError: null };
}

async function prepare(): Promise<PreparedExamples> {
  await install();
  const regeneration = await regenerate();
  const tsc = await run(process.execPath, [bin('typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { timeoutMs: 120_000 });
  return { ...regeneration, tsc };
}

/**
 * examples/ prepared for this run (see above): the first caller does it, under a lock folder in
 * the run's temporary folder; a caller in another jest worker meanwhile waits for its outcome,
 * and every later one reads it.
 */
export async function preparedExamples(): Promise<PreparedExamples> {
  const dir = process.env[RUN_MARKER] ?? tmpdir();
  const outcome = join(dir, 'examples-prepared.json');
  const lock = join(dir, 'examples-prepared.lock');
  const read = () => (existsSync(outcome) ? (JSON.parse(readFileSync(outcome, 'utf8')) as PreparedExamples) : undefined);
  const taken = () => {
    try {
      mkdirSync(lock);
      return true;
    } catch {
      return false;
    }
  };
  const done = await until(() => read() ?? (taken() ? 'mine' : undefined), "another worker's preparation of examples/", { ms: 400_000, everyMs: 100 });
  if (done !== 'mine') return done;
  try {
    const prepared = await prepare();
    // Whole or absent: a waiting worker never reads half of it.
    writeFileSync(`${outcome}.tmp`, JSON.stringify(prepared));
    renameSync(`${outcome}.tmp`, outcome);
    return prepared;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** The port a starting Prism logs that it listens on. */
export async function prismPort(prism: ChildProcess, log: () => string): Promise<number> {
  const port = await until(() => (prism.exitCode !== null ? -1 : Number(/Prism is listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(log())?.[1] ?? 0)), 'Prism to listen', { ms: 30_000 }).catch((err: Error) => {
    throw new Error(`${err.message}:\n${log()}`);
  });
  if (port < 0) throw new Error(`Prism did not start:\n${log()}`);
  return port;
}

/**
 * Prism logs a request's violations before it answers, in one process and in order: once a
 * marker request's own line is in the log, so are the lines of every request answered before it.
 */
export async function logCaughtUp(base: string, log: () => string): Promise<void> {
  // A documented read (a 200 from the mock, a documented 404 through the proxy) at an id no
  // request before it used, so its line is the marker's own.
  const path = `/posts/${2_147_480_000 + randomInt(3_000)}`;
  await fetch(base + path);
  const line = new RegExp(`${path}(?!\\d)`);
  await until(() => line.test(log()), `Prism's log line of the marker request ${path}`);
}

/**
 * docs/api.md's curl tour (what test/tour.test.ts runs), for `api` instead of localhost:3000. Run
 * it in the folder of the service it talks to (its `npm run set-role` steps and the mails it reads
 * are that service's); with `noProject` (Prism's mock, which has no database or mails) those steps
 * do nothing and `mailed` names a token of the document's form.
 */
export function curlTour(api: string, noProject = false): string {
  const markdown = readFileSync(join(root, 'docs', 'api.md'), 'utf8');
  const section = markdown.slice(markdown.indexOf('## A tour with curl'));
  const block = /```sh\n([\s\S]*?)```/.exec(section.slice(0, section.indexOf('\n## ', 3)))?.[1];
  if (!block?.includes('API=http://localhost:3000\n')) throw new Error('docs/api.md: no ```sh block starting with API=http://localhost:3000 under "## A tour with curl"');
  const tour = block.replace('API=http://localhost:3000\n', `API=${api}\n`);
  if (!noProject) return tour;
  const token = (REQUEST_BODIES.ResetPasswordInput.example as { token: string }).token;
  if (!/^npm run --silent set-role /m.test(tour) || !/^mailed\(\) \{/m.test(tour)) throw new Error('docs/api.md\'s tour: no set-role step or no mailed() to stand in for');
  return tour.replace(/^npm run --silent set-role .*$/gm, ':').replace(/^EMAIL=/m, `mailed() { echo ${token}; }\nEMAIL=`);
}
