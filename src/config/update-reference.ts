/**
 * Rewrites docs/reference/configuration.md from organism.schema.json.
 * Run after editing the schema: `npx tsx src/config/update-reference.ts` (or src/reference/update.ts
 * for every reference page).
 */
import { referencePath, writeIfChanged } from '../reference/files.ts';
import { renderConfigReference } from './docs.ts';
import { organismSchema } from './schema.ts';

process.stdout.write(
  `${writeIfChanged(referencePath('configuration.md'), renderConfigReference(organismSchema))}\n`,
);
