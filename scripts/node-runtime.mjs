// npm's postinstall: decides which Node the npm scripts run on. It may itself run on the bundled
// Node (npm puts node_modules/.bin first on PATH), so it asks about the Node npm runs on
// (npm_node_execpath): the machine's. It uses no dependency.
//
// The service needs a Node that `engines` names. A machine whose own Node is older (these come
// with 20) still gets the two commands: the `node` devDependency (the official binary, from the
// registry) is linked as node_modules/.bin/node, which `npm run` puts first on PATH, so `npm start`
// and `npm test` run on it. Where the machine's Node is supported, that link is removed and every
// script runs on the machine's Node: CI's Node lines test what they say, and a production install
// (`npm ci --omit=dev`, which has no bundled Node) runs on the Node it was installed with.
import { execFileSync } from 'node:child_process';
import { lstatSync, readFileSync, realpathSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { engines } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** Whether `version` (x.y.z) satisfies a range of the form `^A.B || ^C` (the form `engines` uses). */
export function satisfies(version, range) {
  const [major, minor] = version.split('.').map(Number);
  return range.split('||').some((part) => {
    const m = /^\s*\^(\d+)(?:\.(\d+))?(?:\.\d+)?\s*$/.exec(part);
    if (!m) throw new Error(`engines.node: "${part.trim()}" is not of the form ^major[.minor]`);
    return major === Number(m[1]) && minor >= Number(m[2] ?? 0);
  });
}

const link = join(root, 'node_modules', '.bin', 'node');
const exists = (p) => {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const machine = process.env.npm_node_execpath ?? process.execPath;
  const own = execFileSync(machine, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
  if (exists(link) && realpathSync(machine) === realpathSync(link)) {
    // npm itself runs on the bundled Node (a shell with node_modules/.bin first on PATH): that says
    // nothing about the machine's Node, so the link stays as the last install without it decided.
    console.log(`node-runtime: npm runs on the bundled Node ${own} itself (node_modules/.bin first on PATH); npm scripts stay on it`);
  } else if (satisfies(own, engines.node)) {
    if (exists(link)) unlinkSync(link);
    console.log(`node-runtime: npm scripts run on this machine's Node ${own} (engines: ${engines.node})`);
  } else if (exists(link)) {
    const bundled = JSON.parse(readFileSync(join(root, 'node_modules', 'node', 'package.json'), 'utf8')).version;
    console.log(`node-runtime: this machine's Node ${own} is outside engines (${engines.node}); npm scripts run on the bundled Node ${bundled}`);
  } else {
    // A production install brings no Node: it runs on this one, untested here.
    console.warn(`node-runtime: this machine's Node ${own} is outside engines (${engines.node}), which CI tests; no Node is bundled (a production install)`);
  }
}
