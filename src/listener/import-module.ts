/**
 * Imports a user's module (a listener or a tool; .ts or .js) wherever it lives, the same way in a
 * `"type": "module"` and a `"type": "commonjs"` project:
 *
 * - JavaScript (.js, .mjs) is imported as it is.
 * - TypeScript (.ts, .mts, .tsx), in the compiled runtime, is compiled by esbuild on the daemon's
 *   own thread (typescript-module.ts: as an ES module whatever the package's "type", stack traces
 *   at the user's file:line). The runtime's own code never needs it.
 * - Every import carries a version of the module's files (path, size, mtime of the module and the
 *   local modules it imports), so an edited module, or an edited helper of it, loads fresh on the
 *   next reload and an unchanged one is the cached one. (A .js module's own imports are Node's
 *   cached ones; a TypeScript module is compiled with them, so they reload with it.)
 *
 * From source (vitest, tsx), TypeScript already loads, and a plain import does it all.
 */
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { COMPILED } from '../package-root.ts';
import { moduleClosure } from '../tools/module-closure.ts';

/** The query parameter naming the version a user module was imported at. */
export const VERSION_PARAM = 'organism-v';

const TYPESCRIPT = /\.(ts|mts|cts|tsx)$/;

/** A short digest of the module's files as they are now: changes when any of them is edited. */
function moduleVersion(absPath: string): string {
  const hash = createHash('sha256');
  for (const file of [absPath, ...moduleClosure(absPath, '/')]) {
    try {
      const info = statSync(file);
      hash.update(`${file}\0${info.size}\0${info.mtimeMs}\n`);
    } catch {
      hash.update(`${file}\0missing\n`);
    }
  }
  return hash.digest('hex').slice(0, 12);
}

/**
 * Imports the module at `absPath` (see the top of this file for how). `cache: false`: a TypeScript
 * module is compiled from its source every time, never taken from the compiled-module cache.
 */
export async function importUserModule(
  absPath: string,
  options: { cache?: boolean } = {},
): Promise<Record<string, unknown>> {
  if (!isAbsolute(absPath)) throw new TypeError(`importUserModule needs an absolute path, got ${absPath}`);
  if (COMPILED && TYPESCRIPT.test(absPath)) {
    const { importTypescriptModule } = await import('./typescript-module.ts');
    return importTypescriptModule(absPath, options);
  }
  const url = pathToFileURL(absPath);
  url.searchParams.set(VERSION_PARAM, moduleVersion(absPath));
  return (await import(url.href)) as Record<string, unknown>;
}

/**
 * The module's default export. A module compiled to CommonJS has it one level down, as
 * `module.exports.default`; `accept` says which of the two is the real one.
 */
export function defaultExport(mod: Record<string, unknown>, accept: (value: unknown) => boolean): unknown {
  const first = mod.default;
  if (accept(first)) return first;
  const nested = (first as Record<string, unknown> | undefined)?.default;
  return accept(nested) ? nested : first;
}
