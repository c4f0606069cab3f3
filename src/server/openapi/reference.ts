/** docs/reference/http-api.json: where the OpenAPI document is kept in the repository, and its text. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_DIR } from '../../package-root.ts';
import { openApiDocument } from './document.ts';

export const REFERENCE_FILE = join(PACKAGE_DIR, 'docs', 'reference', 'http-api.json');

/** The file's text as it should be: the document for the package's version, dashboard on. */
export function referenceText(): string {
  const { version } = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as {
    version: string;
  };
  return `${JSON.stringify(openApiDocument({ version, dashboard: true }), null, 2)}\n`;
}
