/**
 * Imports a user's module (a listener or a tool; .ts or .js) wherever it lives. TypeScript loads
 * through tsx, which bin/organism.js registers (and vitest handles under test).
 */
import { pathToFileURL } from 'node:url';

/**
 * import() first. A .ts module outside a `"type": "module"` package is taken for CommonJS: under
 * tsx's registered hooks it may then fail as a require() cycle (its `import ... from 'organism'`)
 * or not be compiled at all (a syntax error at its first type annotation); and without registered
 * hooks (organism used as a library) .ts does not load. tsx's own tsImport handles all of these, so
 * a .ts module that fails a plain import() is tried once more through it.
 */
export async function importUserModule(absPath: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(absPath).href;
  try {
    return await import(url);
  } catch (error) {
    if (!/\.[cm]?tsx?$/.test(absPath)) throw error;
    const { tsImport } = await import('tsx/esm/api');
    return (await tsImport(url, import.meta.url)) as Record<string, unknown>;
  }
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
