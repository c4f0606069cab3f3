/**
 * Where the package's own files are. The same code runs from source (`src/`, under vitest or tsx)
 * and compiled (`dist/src/`, what the published package runs), so paths to the package's files are
 * worked out here once instead of as `../..` guesses in each module. A leaf module.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = fileURLToPath(import.meta.url);

/** True when this is the compiled JavaScript in `dist/`, false when the TypeScript source runs. */
export const COMPILED: boolean = HERE.endsWith('.js');

/** The extension of the runtime's own modules as they run: `.js` compiled, `.ts` from source. */
export const MODULE_EXT: '.js' | '.ts' = COMPILED ? '.js' : '.ts';

/** The folder holding `src/`, `tools/` and `librarian/` as they run: the package folder, or its `dist/`. */
export const CODE_ROOT: string = resolve(dirname(HERE), '..');

/**
 * The package folder: package.json, organism.schema.json, README.md, listeners/. Found upwards
 * from where it should be, so a bundle of the runtime somewhere inside the package (the benches
 * bundle theirs into node_modules/.cache) still finds the package's files.
 */
export const PACKAGE_DIR: string = findPackageDir(COMPILED ? resolve(CODE_ROOT, '..') : CODE_ROOT);

function findPackageDir(expected: string): string {
  for (let dir = expected; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'organism.schema.json'))) return dir;
    if (dirname(dir) === dir) return expected;
  }
}

/** Absolute path of a file shipped at the top of the package (`package.json`, `organism.schema.json`...). */
export function packageFile(name: string): string {
  return join(PACKAGE_DIR, name);
}
