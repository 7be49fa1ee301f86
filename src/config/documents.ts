import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * A trusted documents manifest (GRAPHQL_DOCUMENTS): `{ "<sha256 hex of the document>": "<document>" }`,
 * the `persisted-documents.json` GraphQL Code Generator's client preset writes. Read once at
 * start; every key is checked against its document, so a manifest that does not match the
 * documents it names never starts (each id would run another text than the client built with).
 */
export interface DocumentManifest {
  /** The file, as GRAPHQL_DOCUMENTS named it (for messages). */
  file: string;
  /** sha256 hex (lower case) → document text. */
  documents: ReadonlyMap<string, string>;
}

export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** `sha256:<hex>` or `<hex>`, any case, as its lower-case hex; null when it is neither. */
export function documentHash(id: string): string | null {
  const m = /^(?:sha256:)?([0-9a-f]{64})$/i.exec(id);
  return m ? m[1].toLowerCase() : null;
}

/** Throws an Error whose message names the file and what is wrong with it. */
export function readDocumentManifest(file: string): DocumentManifest {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`GRAPHQL_DOCUMENTS: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`GRAPHQL_DOCUMENTS: ${file} is not JSON (${(err as Error).message})`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new Error(`GRAPHQL_DOCUMENTS: ${file} must be a JSON object of "<sha256 hex>": "<document>"`);
  }
  const documents = new Map<string, string>();
  for (const [key, document] of Object.entries(parsed)) {
    const shown = key.length > 80 ? `${key.slice(0, 77)}...` : key;
    if (typeof document !== 'string') throw new Error(`GRAPHQL_DOCUMENTS: ${file}: the document of ${JSON.stringify(shown)} is not a string`);
    const hex = documentHash(key);
    if (!hex) throw new Error(`GRAPHQL_DOCUMENTS: ${file}: key ${JSON.stringify(shown)} is not a sha256 hex hash`);
    if (hex !== sha256Hex(document)) throw new Error(`GRAPHQL_DOCUMENTS: ${file}: key ${JSON.stringify(shown)} is not the sha256 of its document (that is ${sha256Hex(document)})`);
    documents.set(hex, document);
  }
  return { file, documents };
}
