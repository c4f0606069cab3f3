/**
 * Writes the HTTP API's OpenAPI document to docs/reference/http-api.json, as the daemon serves it
 * with the dashboard on. Run after changing a route, its table entry or an answer's schema:
 * `npx tsx src/server/openapi/update-reference.ts`. A test fails while the file differs.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { REFERENCE_FILE, referenceText } from './reference.ts';

const text = referenceText();
const before = existsSync(REFERENCE_FILE) ? readFileSync(REFERENCE_FILE, 'utf8') : '';
if (text !== before) {
  mkdirSync(dirname(REFERENCE_FILE), { recursive: true });
  writeFileSync(REFERENCE_FILE, text);
}
process.stdout.write(`${REFERENCE_FILE} ${text === before ? 'already up to date' : 'updated'}\n`);
