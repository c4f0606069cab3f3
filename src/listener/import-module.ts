/**
 * Imports a user's module (a listener or a tool; .ts or .js) wherever it lives, the same way in a
 * `"type": "module"` and a `"type": "commonjs"` project:
 *
 * - JavaScript (.js, .mjs) is imported as it is; the runtime never loads tsx for it, nor for its
 *   own compiled code.
 * - TypeScript (.ts, .mts, .tsx) needs tsx, loaded on the first such import (an optional peer
 *   dependency: the project installs it). A listener is ESM (`import ... from 'organism'`,
 *   `export default`), and organism is an ES module, so a user's .ts files are always loaded as
 *   ES modules, also in a commonjs package where tsx would compile them to CommonJS (which cannot
 *   `require` organism, and whose stack frames were a multi-kB `data:` URL). Stack traces show the
 *   user's file:line through tsx's source maps.
 * - Every import carries a version of the module's files (path, size, mtime of the module and the
 *   local modules it imports), so an edited module, or an edited helper of it, loads fresh on the
 *   next reload, and an unchanged one is the cached one. For TypeScript the version travels on to
 *   the module's own relative imports, which therefore reload with it.
 */
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ListenerLoadError } from '../errors.ts';
import { COMPILED } from '../package-root.ts';
import { moduleClosure } from '../tools/module-closure.ts';

/** The query parameter naming the version a user module was imported at. */
export const VERSION_PARAM = 'organism-v';

const TYPESCRIPT = /\.(ts|mts|tsx)$/;

/**
 * Loader hooks, registered after tsx's so that they run first: a file a versioned module imports
 * inherits the version (a fresh copy on reload), and TypeScript files in that graph load as ES
 * modules whatever the package's "type". Plain JavaScript in a data: URL, because the hooks run on
 * Node's loader thread, where neither tsx nor a build step can be assumed.
 */
const HOOKS = `
const PARAM = ${JSON.stringify(VERSION_PARAM)};
const TS = /\\.(ts|mts|tsx)$/;
function version(url) {
  if (!url || !url.startsWith('file:')) return null;
  return new URL(url).searchParams.get(PARAM);
}
export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  if (!result.url.startsWith('file:')) return result;
  const url = new URL(result.url);
  let v = url.searchParams.get(PARAM);
  if (v === null) {
    v = version(context.parentURL);
    if (v === null || url.pathname.includes('/node_modules/') || /\\.(json|cjs|cts|node)$/.test(url.pathname)) return result;
    url.searchParams.set(PARAM, v);
  }
  return TS.test(url.pathname) ? { ...result, url: url.href, format: 'module' } : { ...result, url: url.href };
}
`;

let typescriptReady: Promise<void> | undefined;

/** Registers tsx, then the hooks above, once per process, when the first .ts user module is imported. */
function loadTypescriptSupport(forModule: string): Promise<void> {
  typescriptReady ??= (async () => {
    let tsx: { register(): unknown };
    try {
      tsx = (await import('tsx/esm/api')) as { register(): unknown };
    } catch {
      // Not beside organism: perhaps in the user's own project (organism linked or installed elsewhere).
      try {
        const path = createRequire(forModule).resolve('tsx/esm/api');
        tsx = (await import(pathToFileURL(path).href)) as { register(): unknown };
      } catch {
        throw new ListenerLoadError(
          forModule,
          'is TypeScript, which needs tsx: install it in the project (`npm install --save-dev tsx`), or write the module in JavaScript',
        );
      }
    }
    tsx.register();
    register(`data:text/javascript,${encodeURIComponent(HOOKS)}`);
  })();
  // A failed attempt is not remembered: installing tsx and reloading must work without a restart.
  typescriptReady.catch(() => {
    typescriptReady = undefined;
  });
  return typescriptReady;
}

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

/** Imports the module at `absPath` (see the top of this file for how). */
export async function importUserModule(absPath: string): Promise<Record<string, unknown>> {
  if (!isAbsolute(absPath)) throw new TypeError(`importUserModule needs an absolute path, got ${absPath}`);
  const url = pathToFileURL(absPath);
  url.searchParams.set(VERSION_PARAM, moduleVersion(absPath));
  // The runtime's own source (.ts) runs only where TypeScript already loads: under vitest, which
  // compiles it itself, or under tsx. Compiled, it is plain Node, and a .ts user module needs tsx.
  if (COMPILED && TYPESCRIPT.test(absPath)) await loadTypescriptSupport(absPath);
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
