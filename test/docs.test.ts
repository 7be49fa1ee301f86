import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The README is the front door and docs/ the reference; these checks keep both true as the code
 * moves: every setting the config reads is documented, and no relative link or anchor dangles.
 */
const root = join(__dirname, '..');
const read = (path: string) => readFileSync(path, 'utf8');

const docsDir = join(root, 'docs');
const pages = [
  join(root, 'README.md'),
  ...readdirSync(docsDir)
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(docsDir, f)),
];

/** Lines outside ``` fences: headings and links inside code blocks are not markdown. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** GitHub's heading ids: lower-case, punctuation dropped, spaces to '-', repeats suffixed -1, -2. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const ids = new Set<string>();
  for (const line of prose(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    ids.add(n === 0 ? base : `${base}-${n}`);
  }
  return ids;
}

function links(text: string): string[] {
  const out: string[] = [];
  for (const line of prose(text)) {
    const noCode = line.replace(/`[^`]*`/g, '');
    for (const m of noCode.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push(m[1]);
  }
  return out;
}

describe('README.md and docs/*.md', () => {
  it('finds the pages it checks', () => {
    const names = pages.map((p) => relative(root, p));
    expect(names).toEqual(expect.arrayContaining(['README.md', 'docs/settings.md', 'docs/api.md', 'docs/operations.md']));
  });

  it('every relative link points to an existing file, and every #anchor to a heading there', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages) {
      for (const target of links(read(page))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
        checked++;
        const [path, anchor] = target.split('#', 2);
        const file = path === '' ? page : resolve(dirname(page), decodeURIComponent(path));
        const where = `${relative(root, page)} → ${target}`;
        if (!existsSync(file)) {
          broken.push(`${where}: no such file`);
          continue;
        }
        if (anchor === undefined || anchor === '') continue;
        if (statSync(file).isDirectory() || !file.endsWith('.md')) {
          broken.push(`${where}: anchor on a file without headings`);
          continue;
        }
        if (!anchors(read(file)).has(decodeURIComponent(anchor))) broken.push(`${where}: no such heading`);
      }
    }
    expect(broken).toEqual([]);
    // The README alone links every docs page; fewer links than that means the parser missed them.
    expect(checked).toBeGreaterThanOrEqual(pages.length);
  });

  it('docs/settings.md documents every setting src/config reads', () => {
    const configDir = join(root, 'src', 'config');
    const source = readdirSync(configDir)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => read(join(configDir, f)))
      .join('\n');
    const names = new Set<string>();
    for (const m of source.matchAll(/^\s+([A-Z][A-Z0-9_]{2,}):/gm)) names.add(m[1]);
    for (const m of source.matchAll(/\benv\.([A-Z][A-Z0-9_]{2,})\b/g)) names.add(m[1]);
    // The schema has 18 settings today; far fewer means the parsing above no longer sees them.
    expect(names.size).toBeGreaterThanOrEqual(18);

    const table = new Set(
      [...read(join(docsDir, 'settings.md')).matchAll(/^\|\s*`([A-Z][A-Z0-9_]+)`\s*\|/gm)].map((m) => m[1]),
    );
    expect([...names].filter((n) => !table.has(n)).sort()).toEqual([]);
  });
});
