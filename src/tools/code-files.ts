/**
 * Which files are the organism's code, for the file guard (src/guard/organism-code.ts): each
 * listener's handler, the tool_modules (a folder whole), the local files those import (found as
 * `organism dev` finds them, src/dev/local-imports.ts) and the scripted provider's scripts.
 */
import { stat } from 'node:fs/promises';
import type { OrganismConfig } from '../config/types.ts';
import { localImportClosure } from '../dev/local-imports.ts';
import { userToolModuleFiles } from './catalog.ts';

export interface CodeFiles {
  /** Absolute path -> what it is, for the refusal's reason. */
  files: Map<string, string>;
  folders: Map<string, string>;
}

type CodeConfig = Pick<OrganismConfig, 'listeners' | 'tool_modules' | 'llm'>;

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
  const memo = new Map<string, readonly string[]>();
  for (const [module, what] of modules) {
    add(module, what);
    for (const imported of localImportClosure(module, memo)) add(imported, `imported by ${what}`);
  }
  return { files, folders };
}
