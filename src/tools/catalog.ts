/**
 * Finds the tools: every `tools/*.ts` and `librarian/tools/*.ts` under a root (the package root by
 * default), sorted by file name, then the user's own modules named by `tool_modules` in
 * organism.yaml; each default-exports a ToolDefinition or an array of them. Discovery instead of a
 * shared list means adding a tool is adding a file.
 */
import { readdir, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolRegistrationError } from '../errors.ts';
import {
  defaultExport,
  importUserModule,
  type ModuleScan,
  newModuleScan,
} from '../listener/import-module.ts';
import type { ResolvedToolDefinition, ToolDefinition } from './types.ts';

/** Where Organism's own tools/ and librarian/ live. */
export const PACKAGE_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

/** Folders searched, in this order, relative to the root. */
export const TOOL_FOLDERS = ['tools', 'librarian/tools'] as const;

export interface CatalogEntry {
  definition: ToolDefinition;
  /** Absolute path of the module file. */
  module: string;
  /** From the organism's `tool_modules` (the user's project), not from Organism's own folders. */
  user?: boolean;
}

const MODULE_FILE = /^[^.].*\.(ts|mts|js|mjs)$/;

export function isModuleFile(name: string): boolean {
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
  // The tools share most of their helpers: each file is read once for all of them.
  const scan = newModuleScan();
  for (const file of await toolModuleFiles(root)) catalog.push(...(await loadToolModule(file, scan)));
  return catalog;
}

/** The tools one module file declares. Throws ToolRegistrationError naming the file and what is wrong. */
export async function loadToolModule(file: string, scan?: ModuleScan): Promise<CatalogEntry[]> {
  let mod: Record<string, unknown>;
  try {
    // Never from the compiled-module cache: integrity hashes the source, so the source is what runs.
    mod = await importUserModule(file, { cache: false, ...(scan ? { scan } : {}) });
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
  const entries: CatalogEntry[] = [];
  for (const definition of list) {
    if (definition === null || typeof definition !== 'object' || typeof definition.run !== 'function') {
      throw new ToolRegistrationError(
        `module ${file}`,
        'default export is not a ToolDefinition (an object with name, args, run...)',
      );
    }
    entries.push({ definition: definition as ToolDefinition, module: file });
  }
  return entries;
}

/**
 * The module files of the user's `tool_modules` entries (absolute paths): a folder gives its module
 * files sorted by name (not its subfolders, so helpers can live in tools/lib/), a file gives itself.
 * Throws ToolRegistrationError naming an entry that does not exist or is not a module.
 */
export function userToolModuleFiles(entries: readonly string[]): Promise<string[]> {
  return moduleFilesOf(
    entries,
    'tool_modules',
    (entry, why) => new ToolRegistrationError(`module ${entry}`, why),
  );
}

/**
 * The module files of a list of code entries (tool_modules, prompt_modules, resource_modules) by
 * the rule above; `fail` makes the error for an entry that cannot be read or is not a module.
 */
export async function moduleFilesOf(
  entries: readonly string[],
  key: string,
  fail: (entry: string, why: string) => Error,
): Promise<string[]> {
  const files: string[] = [];
  for (const entry of entries) {
    const info = await stat(entry).catch((error: NodeJS.ErrnoException) => {
      throw fail(entry, `is in ${key} but cannot be read (${error.code ?? error.message})`);
    });
    if (info.isDirectory()) {
      const names = (await readdir(entry, { withFileTypes: true }))
        .filter((e) => e.isFile() && isModuleFile(e.name))
        .map((e) => e.name)
        .sort();
      for (const name of names) files.push(join(entry, name));
    } else if (isModuleFile(basename(entry))) {
      files.push(entry);
    } else {
      throw fail(entry, `is in ${key} but is neither a folder nor a .ts, .mts, .js or .mjs file`);
    }
  }
  return files;
}

/** The user's tools from `tool_modules`, in the order of the entries. */
export async function loadUserTools(entries: readonly string[]): Promise<CatalogEntry[]> {
  const catalog: CatalogEntry[] = [];
  for (const file of await userToolModuleFiles(entries)) {
    for (const entry of await loadToolModule(file)) catalog.push({ ...entry, user: true });
  }
  return catalog;
}

/**
 * Every tool an organism has: the built-in ones under root, then the user's `tool_modules`. The
 * daemon, `organism validate` and `organism tools` all read this one list, so they agree.
 */
export async function loadOrganismCatalog(
  config: { tool_modules?: readonly string[] },
  root: string = PACKAGE_ROOT,
  /** The built-in ones, when loaded already (loadToolCatalog(root)). */
  native?: readonly CatalogEntry[],
): Promise<CatalogEntry[]> {
  return [...(native ?? (await loadToolCatalog(root))), ...(await loadUserTools(config.tool_modules ?? []))];
}

/** The native tool definitions under root, in discovery order (their `args` are JSON Schema). */
export async function loadNativeTools(root: string = PACKAGE_ROOT): Promise<ResolvedToolDefinition[]> {
  return (await loadToolCatalog(root)).map((entry) => entry.definition as ResolvedToolDefinition);
}
