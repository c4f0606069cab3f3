/**
 * Rewrites the organism.yaml reference in README.md from organism.schema.json.
 * Run after editing the schema: `npx tsx src/config/update-readme.ts`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderConfigReference, replaceReferenceSection } from './docs.ts';
import { organismSchema } from './schema.ts';

const readmePath = fileURLToPath(new URL('../../README.md', import.meta.url));
const before = readFileSync(readmePath, 'utf8');
const after = replaceReferenceSection(before, renderConfigReference(organismSchema));
if (after !== before) writeFileSync(readmePath, after);
process.stdout.write(
  after === before ? 'README reference already up to date\n' : 'README reference updated\n',
);
