import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestApp, type TestApp } from './support/harness';

/**
 * What tools expect of /openapi.json: Redocly's `recommended` rules (its CLI, a root
 * devDependency) on the document the running service serves, 0 errors and 0 warnings.
 *
 * Redocly's CLI sends telemetry and checks for updates by default. It runs here with
 * REDOCLY_TELEMETRY=off and REDOCLY_SUPPRESS_UPDATE_NOTICE=true, in a folder of its own (no
 * redocly.yaml, no .env), under test/support/no-network.cjs, which refuses and reports any
 * connection or DNS lookup: the lint must not need the network, and must not try.
 */
const root = join(__dirname, '..');
const cli = join(root, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
const guard = join(__dirname, 'support', 'no-network.cjs');
const run = promisify(execFile);

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
}

describe('/openapi.json under Redocly\'s recommended rules', () => {
  let app: TestApp;
  let dir: string;

  beforeAll(async () => {
    app = await startTestApp();
    dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
  });
  afterAll(async () => {
    await app?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('has no error and no warning, and the linter reaches for no network', async () => {
    const res = await fetch(`${app.url}/openapi.json`);
    expect(res.status).toBe(200);
    const file = join(dir, 'openapi.json');
    writeFileSync(file, await res.text());

    const env = { PATH: process.env.PATH, HOME: dir, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
    let stdout: string;
    let stderr: string;
    try {
      ({ stdout, stderr } = await run(process.execPath, ['--require', guard, cli, 'lint', '--extends=recommended', '--format=json', file], { cwd: dir, env, maxBuffer: 16 * 1024 * 1024 }));
    } catch (err) {
      // Exit 1 when the lint finds errors: the report is still on stdout.
      ({ stdout, stderr } = err as { stdout: string; stderr: string });
    }
    expect(stderr.split('\n').filter((l) => l.startsWith('NETWORK-ATTEMPT'))).toEqual([]);
    const report = JSON.parse(stdout) as LintReport;
    const problems = report.problems.map((p) => `${p.severity} ${p.ruleId} ${p.location.map((l) => l.pointer).join(' ')}: ${p.message}`);
    expect(problems).toEqual([]);
    expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 0 });
  }, 60_000);

  it('is what the lint rules ask for: servers, a licence, security declared on every operation', async () => {
    const doc = (await (await fetch(`${app.url}/openapi.json`)).json()) as {
      info: { license?: { name: string } };
      servers?: { url: string }[];
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(doc.info.license).toEqual(expect.objectContaining({ name: expect.any(String) }));
    const undeclared = Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).filter(([, op]) => !Array.isArray(op.security)).map(([m]) => `${m.toUpperCase()} ${path}`));
    expect(undeclared).toEqual([]);
  });
});
