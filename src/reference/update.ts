/**
 * Regenerates every page of docs/reference/ from the code: `npx tsx src/reference/update.ts`.
 * Each page has a test that fails while the file differs from what this writes.
 */
import { renderConfigReference } from '../config/docs.ts';
import { organismSchema } from '../config/schema.ts';
import { REFERENCE_FILE, referenceText } from '../server/openapi/reference.ts';
import { renderCliReference } from './cli.ts';
import { renderErrorsReference } from './errors.ts';
import { referencePath, writeIfChanged } from './files.ts';
import { renderHttpApiReference } from './http-api.ts';
import { renderToolResultsReference } from './tool-results.ts';

const pages: Array<[string, () => string | Promise<string>]> = [
  [referencePath('configuration.md'), () => renderConfigReference(organismSchema)],
  [referencePath('cli.md'), () => renderCliReference()],
  [referencePath('errors.md'), () => renderErrorsReference()],
  [referencePath('tool-results.md'), () => renderToolResultsReference()],
  [REFERENCE_FILE, () => referenceText()],
  [referencePath('http-api.md'), () => renderHttpApiReference()],
];
for (const [path, render] of pages) process.stdout.write(`${writeIfChanged(path, await render())}\n`);
