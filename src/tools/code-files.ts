/**
 * Which files are the organism's code, for the file guard (src/guard/organism-code.ts): each
 * listener's handler, the tool_modules, prompt_modules and resource_modules (a folder whole), the
 * local files those import (found as `organism dev` finds them, src/dev/local-imports.ts), the
 * scripted provider's scripts; and apart (runtimeCodeFolders: not watched by `organism dev`), the
 * code every daemon loads at its next start: the package's own folders and every node_modules a
 * module of the project or of the package resolves from.
 */
import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OrganismConfig } from '../config/types.ts';
import { localImportClosure } from '../dev/local-imports.ts';
import { isModuleFile, userToolModuleFiles } from './catalog.ts';

export interface CodeFiles {
  /** Absolute path -> what it is, for the refusal's reason. */
  files: Map<string, string>;
  folders: Map<string, string>;
}

type CodeConfig = Pick<OrganismConfig, 'listeners' | 'tool_modules' | 'llm'> &
  Partial<Pick<OrganismConfig, 'prompt_modules' | 'resource_modules'>>;

/** The organism package's folder: the nearest one above this module with a package.json. */
function packageDir(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return from;
  }
}
const PACKAGE_DIR = packageDir(dirname(fileURLToPath(import.meta.url)));
/** The package's code: its entry (bin), the built tree (dist) and, run from a checkout, the sources. */
const PACKAGE_CODE = ['bin', 'dist', 'src', 'tools', 'librarian'];

/**
 * Code a daemon loads at its next start, which no file tool may write: the package's own folders,
 * and every node_modules Node resolves a package from for a module of the project or of the
 * package (the folder's own and each one above it, there or not yet: one made by a tool would be
 * resolved too). The organism package itself, installed, lives in the project's node_modules.
 */
export function runtimeCodeFolders(projectDir: string | undefined): Map<string, string> {
  const folders = new Map<string, string>();
  for (const folder of PACKAGE_CODE)
    folders.set(join(PACKAGE_DIR, folder), "the organism package's own code");
  for (const start of projectDir === undefined ? [PACKAGE_DIR] : [resolve(projectDir), PACKAGE_DIR]) {
    for (let dir = start; ; dir = dirname(dir)) {
      const modules = join(dir, 'node_modules');
      if (!folders.has(modules)) folders.set(modules, 'a node_modules folder (packages the daemon loads)');
      if (dirname(dir) === dir) break;
    }
  }
  return folders;
}

export async function organismCodeFiles(config: CodeConfig): Promise<CodeFiles> {
  const files = new Map<string, string>();
  const folders = new Map<string, string>();
  const add = (file: string, what: string) => {
    if (!files.has(file)) files.set(file, what);
  };
  const modules: Array<[string, string]> = [];
  for (const listener of config.listeners) {
    if (typeof listener.handler === 'string')
      modules.push([listener.handler, `the handler of listener ${listener.name}`]);
    const script = (listener as { llm?: { script?: unknown } }).llm?.script;
    if (typeof script === 'string') add(script, `the script of agent ${listener.name}`);
  }
  for (const backend of config.llm?.backends ?? []) {
    if (typeof backend.script === 'string') add(backend.script, 'a script of llm.backends');
  }
  for (const entry of config.tool_modules ?? []) {
    const info = await stat(entry).catch(() => undefined);
    // A folder whole: a module added to it is loaded at the next reload.
    if (info?.isDirectory()) folders.set(entry, 'a tool_modules folder');
    else add(entry, 'a tool module');
    // One entry that cannot be read (the load says so) leaves the others found.
    for (const file of await userToolModuleFiles([entry]).catch(() => []))
      modules.push([file, 'a tool module']);
  }
  // MCP prompts and resources run in the daemon as tools do: the same protection, folders whole.
  for (const [key, what] of [
    ['prompt_modules', 'a prompt module'],
    ['resource_modules', 'a resource module'],
  ] as const) {
    for (const entry of config[key] ?? []) {
      const info = await stat(entry).catch(() => undefined);
      if (info?.isDirectory()) {
        folders.set(entry, `a ${key} folder`);
        for (const name of await readdir(entry).catch(() => [] as string[]))
          if (isModuleFile(name)) modules.push([join(entry, name), what]);
      } else modules.push([entry, what]);
    }
  }
  const memo = new Map<string, readonly string[]>();
  for (const [module, what] of modules) {
    add(module, what);
    for (const imported of localImportClosure(module, memo)) add(imported, `imported by ${what}`);
  }
  return { files, folders };
}
