/**
 * Where the generated reference pages live (docs/reference/), and the one way they are written:
 * only when the text changed, so a regeneration that changes nothing leaves the files untouched.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's docs/reference/ folder (from src/reference/, two levels up). */
export const REFERENCE_DIR = fileURLToPath(new URL('../../docs/reference/', import.meta.url));

/** The command that regenerates every reference page, named in each page and each staleness test. */
export const UPDATE_COMMAND = 'npx tsx src/reference/update.ts';

export function referencePath(name: string): string {
  return `${REFERENCE_DIR}${name}`;
}

/** Writes `text` to `path` unless it is there already; returns one line saying which. */
export function writeIfChanged(path: string, text: string): string {
  const before = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  if (before !== text) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
  return `${relative(process.cwd(), path)} ${before === text ? 'already up to date' : 'updated'}`;
}
