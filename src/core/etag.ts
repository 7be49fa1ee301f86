import { hash } from 'node:crypto';
import { AppError } from './errors';

/**
 * Strong entity tags and the If-Match precondition of writes (RFC 9110 8.8.3, 13.1.1).
 *
 * A resource's tag is `entityTag` over the exact JSON text its REST answer carries, built by the
 * one builder per resource (each module's repository): the public read's tag, a write's answer's
 * tag and GraphQL's `etag` field are the same function over the same text, so a client may send
 * back whichever it saw.
 */

/**
 * A strong entity tag for `text` (and what distinguishes another representation of the same
 * text, e.g. its media type): its SHA-1, base64url, quoted. Not a secret, only a fingerprint:
 * hashing is ~2 us for a 10 kB page, so the full answer costs nothing measurable more.
 */
export function entityTag(text: string, variant = ''): string {
  return `"${hash('sha1', variant ? variant + '\n' + text : text, 'base64url')}"`;
}

/**
 * What a caller asked of a write to an existing resource: its If-Match (REST header, GraphQL
 * `ifMatch`), and whether a write without one is refused (REQUIRE_IF_MATCH). A plain value: the
 * surfaces parse it, services never see a request.
 */
export interface Precondition {
  ifMatch: string | undefined;
  required: boolean;
}

export const precondition = (required: boolean, ifMatch: string | null | undefined): Precondition => ({ ifMatch: ifMatch ?? undefined, required });

/**
 * If-Match against the current tag: `*` matches any existing resource; otherwise one of the
 * listed tags must equal it by strong comparison, so a weak tag (`W/"..."`) never matches.
 */
function ifMatchHolds(ifMatch: string, current: string): boolean {
  if (ifMatch.trim() === '*') return true;
  for (const m of ifMatch.matchAll(/(W\/)?"[^"]*"/g)) if (!m[1] && m[0] === current) return true;
  return false;
}

/**
 * Checks a write's precondition; called under the resource's row lock, after the 401/404/403
 * checks and before the input is parsed, so the comparison and the write are one serial step and
 * nothing is written when it fails. `currentTag` builds the resource's current answer in the
 * write's transaction; it runs only when a tag must be compared (not for `*` or no If-Match).
 */
export async function checkPrecondition(pre: Precondition, currentTag: () => Promise<string>): Promise<void> {
  if (pre.ifMatch === undefined) {
    if (pre.required) throw AppError.preconditionRequired();
    return;
  }
  if (pre.ifMatch.trim() === '*') return;
  const tag = await currentTag();
  if (!ifMatchHolds(pre.ifMatch, tag)) throw AppError.preconditionFailed(tag);
}
