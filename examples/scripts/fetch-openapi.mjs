// Refreshes rest/openapi.json, the copy of the service's OpenAPI document the REST client's types
// are generated from, from a running service: API_URL (default http://localhost:3000)/openapi.json.
// Written as JSON.stringify(document, null, 2) plus a newline, as test/examples.test.ts writes it.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const api = process.env.API_URL ?? 'http://localhost:3000';
const res = await fetch(`${api}/openapi.json`);
if (!res.ok) throw new Error(`GET ${api}/openapi.json answered ${res.status}`);
const target = join(dirname(fileURLToPath(import.meta.url)), '..', 'rest', 'openapi.json');
writeFileSync(target, JSON.stringify(await res.json(), null, 2) + '\n');
console.log(`${api}/openapi.json → rest/openapi.json`);
