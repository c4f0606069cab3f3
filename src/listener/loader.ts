/**
 * Loads a user's listener module (.ts or .js) and checks that its default export was made by
 * defineListener. How the module is imported (TypeScript compiled on load, no build step; a fresh
 * copy after an edit) is import-module.ts's business.
 */
import { stat } from 'node:fs/promises';
import { ListenerLoadError } from '../errors.ts';
import { defaultExport, importUserModule } from './import-module.ts';
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
    mod = await importUserModule(absPath);
  } catch (error) {
    throw new ListenerLoadError(absPath, `import failed: ${errorText(error)}`, { cause: error });
  }
  const definition = defaultExport(mod, isListenerDefinition);
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
