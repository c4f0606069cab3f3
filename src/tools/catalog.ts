/**
 * Finds the native tools: every `tools/*.ts` and `librarian/tools/*.ts` under a root (the package
 * root by default), sorted by file name, each default-exporting a ToolDefinition or an array of
 * them. Discovery instead of a shared list means adding a tool is adding a file.
 */
import { readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolRegistrationError } from '../errors.ts';
import { defaultExport, importUserModule } from '../listener/import-module.ts';
import type { ToolDefinition } from './types.ts';

/** Where Organism's own tools/ and librarian/ live. */
export const PACKAGE_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

/** Folders searched, in this order, relative to the root. */
export const TOOL_FOLDERS = ['tools', 'librarian/tools'] as const;

export interface CatalogEntry {
  definition: ToolDefinition;
  /** Absolute path of the module file. */
  module: string;
}

const MODULE_FILE = /^[^.].*\.(ts|mts|js|mjs)$/;

function isModuleFile(name: string): boolean {
  return MODULE_FILE.test(name) && !/\.d\.(ts|mts)$/.test(name) && !/\.test\.(ts|js)$/.test(name);
}

/** Absolute paths of the tool module files under root, folder by folder, sorted by file name. */
export async function toolModuleFiles(root: string = PACKAGE_ROOT): Promise<string[]> {
  const files: string[] = [];
  for (const folder of TOOL_FOLDERS) {
    const dir = join(root, folder);
    let names: string[];
    try {
      const entries = await readdir(dir, { withFileTypes: true });
      names = entries.filter((e) => e.isFile() && isModuleFile(e.name)).map((e) => e.name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    names.sort();
    for (const name of names) files.push(join(dir, name));
  }
  return files;
}

/** Imports every tool module under root. Throws ToolRegistrationError naming a module without a tool. */
export async function loadToolCatalog(root: string = PACKAGE_ROOT): Promise<CatalogEntry[]> {
  const catalog: CatalogEntry[] = [];
  for (const file of await toolModuleFiles(root)) {
    let mod: Record<string, unknown>;
    try {
      mod = await importUserModule(file);
    } catch (error) {
      throw new ToolRegistrationError(`module ${file}`, `does not load: ${(error as Error).message}`);
    }
    const exported = defaultExport(
      mod,
      (v) => Array.isArray(v) || typeof (v as ToolDefinition | undefined)?.run === 'function',
    );
    const list = Array.isArray(exported) ? exported : [exported];
    if (exported === undefined || list.length === 0) {
      throw new ToolRegistrationError(
        `module ${file}`,
        'has no default export; export a ToolDefinition or an array of them',
      );
    }
    for (const definition of list) {
      if (definition === null || typeof definition !== 'object' || typeof definition.run !== 'function') {
        throw new ToolRegistrationError(
          `module ${file}`,
          'default export is not a ToolDefinition (an object with name, args, run...)',
        );
      }
      catalog.push({ definition: definition as ToolDefinition, module: file });
    }
  }
  return catalog;
}

/** The native tool definitions under root, in discovery order. */
export async function loadNativeTools(root: string = PACKAGE_ROOT): Promise<ToolDefinition[]> {
  return (await loadToolCatalog(root)).map((entry) => entry.definition);
}
