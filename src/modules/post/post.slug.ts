/**
 * CONTRACT 8: lower-case ASCII, accents folded (NFKD, combining marks dropped), every run of
 * other characters becomes one `-`, trimmed of dashes, at most 200 characters, `post` if empty.
 */
export function slugify(title: string): string {
  const slug = title
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 200)
    .replace(/-+$/, '');
  return slug || 'post';
}

/** The first free slug for `base` given the slugs already taken that start with it: base, base-2, base-3, ... */
export function nextFreeSlug(base: string, taken: string[]): string {
  let max = 0;
  const suffixed = new RegExp(`^${base}-(\\d+)$`);
  for (const s of taken) {
    if (s === base) max = Math.max(max, 1);
    const m = suffixed.exec(s);
    if (m) max = Math.max(max, Number(m[1]));
  }
  return max === 0 ? base : `${base}-${max + 1}`;
}
