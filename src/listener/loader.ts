/**
 * Loads a user's listener module (.ts or .js) and checks that its default export was made by
 * defineListener. TypeScript modules load through tsx, which bin/organism.js registers (and vitest
 * handles under test), so users never need a build step.
 */
import { stat } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { ListenerLoadError } from '../errors.ts';
import { isListenerDefinition, type ListenerDefinition } from './types.ts';

/** Imports the module at `absPath` and returns its listener definition; throws ListenerLoadError saying why not. */
export async function loadListenerModule(absPath: string): Promise<ListenerDefinition<any>> {
  try {
    const info = await stat(absPath);
    if (!info.isFile()) throw new ListenerLoadError(absPath, 'not a file');
  } catch (error) {
    if (error instanceof ListenerLoadError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new ListenerLoadError(absPath, code === 'ENOENT' ? 'file not found' : (error as Error).message, {
      cause: error,
    });
  }
  let mod: Record<string, unknown>;
  try {
    mod = await importModule(absPath);
  } catch (error) {
    throw new ListenerLoadError(absPath, `import failed: ${errorText(error)}`, { cause: error });
  }
  const definition = unwrapDefault(mod);
  if (definition === undefined) {
    throw new ListenerLoadError(absPath, 'no default export; write `export default defineListener({ ... })`');
  }
  if (!isListenerDefinition(definition)) {
    throw new ListenerLoadError(
      absPath,
      `the default export (${kind(definition)}) was not made by defineListener; write \`export default defineListener({ ... })\``,
    );
  }
  const tag = definition.payload?.tag;
  if (typeof tag !== 'string' || tag === '') {
    throw new ListenerLoadError(absPath, 'defineListener({ payload: { tag } }) needs a non-empty tag');
  }
  if (typeof definition.handler !== 'function') {
    throw new ListenerLoadError(absPath, 'defineListener({ handler }) needs a handler function');
  }
  return definition as ListenerDefinition<any>;
}

/** Errors of a plain import() that tsx's own importer gets past (see importModule). */
const RETRY_WITH_TSX = new Set(['ERR_REQUIRE_CYCLE_MODULE', 'ERR_UNKNOWN_FILE_EXTENSION', 'ERR_REQUIRE_ESM']);

/**
 * import() first. A .ts module outside a `"type": "module"` package is compiled to CommonJS by the
 * registered tsx hooks, and its `import ... from 'organism'` then fails as a require() cycle; and
 * without registered hooks (organism used as a library) .ts does not load at all. tsx's tsImport
 * handles both, so those cases retry through it.
 */
async function importModule(absPath: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(absPath).href;
  try {
    return await import(url);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException)?.code;
    if (!code || !RETRY_WITH_TSX.has(code) || !/\.[cm]?tsx?$/.test(absPath)) throw error;
    const { tsImport } = await import('tsx/esm/api');
    return (await tsImport(url, import.meta.url)) as Record<string, unknown>;
  }
}

/** The default export; for a module compiled to CommonJS that is `module.exports.default`. */
function unwrapDefault(mod: Record<string, unknown>): unknown {
  const first = mod.default;
  if (isListenerDefinition(first)) return first;
  const nested = (first as Record<string, unknown> | undefined)?.default;
  return isListenerDefinition(nested) ? nested : first;
}

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message.split('\n').filter(Boolean).slice(0, 4).join(' | ');
  return String(error);
}

function kind(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'a plain object' : `a ${typeof value}`;
}
