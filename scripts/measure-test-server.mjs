// Measures `npm run test-server` as a client team's suite meets it: the time from spawn to its
// JSON line (build included, as `npm run test-server` builds first), and the time of
// POST /__test/reset without and with the demo fixture, and from SIGTERM to its exit (everything
// removed). Prints min and median of each.
//   node scripts/measure-test-server.mjs [starts=5] [resets per start=10]
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const starts = Number(process.argv[2] ?? 5);
const resetsPerStart = Number(process.argv[3] ?? 10);
const times = { start: [], reset: [], resetDemo: [], stop: [] };

async function once() {
  const t0 = performance.now();
  const child = spawn('npm', ['run', '--silent', 'test-server'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] });
  const exited = new Promise((r) => child.once('exit', r));
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    exited.then(() => reject(new Error('exited before its line')));
  });
  times.start.push(performance.now() - t0);
  const { url } = JSON.parse(line);
  const reset = async (fixture) => {
    const t = performance.now();
    const res = await fetch(`${url}/__test/reset`, fixture ? { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ fixture }) } : { method: 'POST' });
    if (res.status !== 204) throw new Error(`reset: ${res.status} ${await res.text()}`);
    return performance.now() - t;
  };
  await reset('demo'); // the first of each kind warms up (statement plans, bcrypt's thread pool)
  await reset();
  // Alternating, so that both kinds see the same machine.
  for (let i = 0; i < resetsPerStart; i++) {
    times.resetDemo.push(await reset('demo'));
    times.reset.push(await reset());
  }
  const t = performance.now();
  child.kill('SIGTERM');
  await exited;
  times.stop.push(performance.now() - t);
}

for (let i = 0; i < starts; i++) await once();
const stat = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return `min ${s[0].toFixed(0)} ms, median ${s[Math.floor(s.length / 2)].toFixed(0)} ms (n=${s.length})`;
};
console.log(`spawn to JSON line:      ${stat(times.start)}`);
console.log(`POST /__test/reset:      ${stat(times.reset)}`);
console.log(`  with {"fixture":"demo"}: ${stat(times.resetDemo)}`);
console.log(`SIGTERM to exit:         ${stat(times.stop)}`);
