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

/**
 * What a batch of imports made together (a catalog's tool modules, which share most of their
 * helpers) has read of their files: each file is read and stat'ed once for the batch. Made fresh
 * for each batch, so an edit between two batches (a reload) is seen.
 */
export interface ModuleScan {
  /** A file's local imports (module-closure.ts). */
  imports: Map<string, readonly string[]>;
  /** A file's line in a version digest: path, size, mtime. */
  stats: Map<string, string>;
}

export function newModuleScan(): ModuleScan {
  return { imports: new Map(), stats: new Map() };
}

/** A short digest of the module's files as they are now: changes when any of them is edited. */
function moduleVersion(absPath: string, scan?: ModuleScan): string {
  const hash = createHash('sha256');
  for (const file of [absPath, ...moduleClosure(absPath, '/', undefined, scan?.imports)]) {
    let line = scan?.stats.get(file);
    if (line === undefined) {
      try {
        const info = statSync(file);
        line = `${file}\0${info.size}\0${info.mtimeMs}\n`;
      } catch {
        line = `${file}\0missing\n`;
      }
      scan?.stats.set(file, line);
    }
    hash.update(line);
  }
  return hash.digest('hex').slice(0, 12);
}

/**
 * Imports the module at `absPath` (see the top of this file for how). `cache: false`: a TypeScript
 * module is compiled from its source every time, never taken from the compiled-module cache.
 */
export async function importUserModule(
  absPath: string,
  options: { cache?: boolean; scan?: ModuleScan } = {},
): Promise<Record<string, unknown>> {
  if (!isAbsolute(absPath)) throw new TypeError(`importUserModule needs an absolute path, got ${absPath}`);
  if (COMPILED && TYPESCRIPT.test(absPath)) {
    const { importTypescriptModule } = await import('./typescript-module.ts');
    return importTypescriptModule(absPath, options);
  }
  const url = pathToFileURL(absPath);
  url.searchParams.set(VERSION_PARAM, moduleVersion(absPath, options.scan));
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
