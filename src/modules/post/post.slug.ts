/** The slug rule's cap; the column holds 255, so a longer slug would be stored without complaint. */
const SLUG_MAX = 200;

/**
 * The slug rule: lower-case ASCII, accents folded (NFKD, combining marks dropped), every run of
 * other characters becomes one `-`, trimmed of dashes, at most 200 characters, `post` if empty.
 */
export function slugify(title: string): string {
  const slug = title
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, SLUG_MAX)
    .replace(/-+$/, '');
  return slug || 'post';
}

/**
 * The n-th slug for `base` (n ≥ 2): `base-n`, with the base shortened (and a dash it would
 * end on dropped) so that the whole stays within 200 characters.
 */
function suffixedSlug(base: string, n: number): string {
  const suffix = `-${n}`;
  return `${base.slice(0, SLUG_MAX - suffix.length).replace(/-+$/, '')}${suffix}`;
}

/**
 * What every suffixed slug of `base` starts with, for an index-assisted lookup. Suffixes of up to
 * 15 digits cut at most 16 characters (and a dangling dash) off a base, so a 183-character
 * prefix covers every suffix this service can produce.
 */
export function suffixedSlugPrefix(base: string): string {
  return base.length + 16 <= SLUG_MAX ? `${base}-` : base.slice(0, SLUG_MAX - 17);
}

/**
 * The next slug for `base` given the taken slugs that may be its siblings: base, then one past
 * the highest suffix in use. Only exact `suffixedSlug(base, n)` strings count, so another
 * title's slug that merely shares the prefix (`base-02`, `base-x-3`) moves nothing.
 */
export function nextFreeSlug(base: string, taken: string[]): string {
  let max = 0;
  for (const s of taken) {
    if (s === base) max = Math.max(max, 1);
    const m = /-([1-9]\d{0,14})$/.exec(s);
    if (m && Number(m[1]) >= 2 && suffixedSlug(base, Number(m[1])) === s) max = Math.max(max, Number(m[1]));
  }
  return max === 0 ? base : suffixedSlug(base, max + 1);
}
