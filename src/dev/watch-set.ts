/**
 * What `organism dev` watches for an organism: organism.yaml and the .env beside it, each
 * listener's handler module, the tool_modules (a folder: any module file in it, added ones too),
 * the scripted provider's scripts, and every local file those modules import.
 *
 * Never a file inside a workspace (organism.workspace, a stdio MCP server's): tools write there
 * (write_file, run_command in its sandbox), and a module they wrote would be loaded into the
 * daemon, outside every sandbox, at their next save. Such files are left out and named instead;
 * `organism reload`, a person's decision, still loads them.
 */
import { stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { OrganismConfig } from '../config/types.ts';
import { userToolModuleFiles } from '../tools/catalog.ts';
import { localImportClosure } from './local-imports.ts';

export interface WatchSet {
  /** Absolute paths: a change to any of them (written, replaced, removed, created) is a save. */
  files: Set<string>;
  /** Folders where any module file appearing, changing or going is a save (tool_modules folders). */
  moduleFolders: Set<string>;
  /** Files and folders left out because tools can write them, each with the workspace that holds it. */
  unwatched: Map<string, string>;
}

export function emptyWatchSet(): WatchSet {
  return { files: new Set(), moduleFolders: new Set(), unwatched: new Map() };
}

/** The config as far as the watch set needs it. */
export type WatchedConfig = Pick<OrganismConfig, 'listeners' | 'tool_modules' | 'llm'> & {
  organism?: { workspace?: string };
  mcp_servers?: ReadonlyArray<{ workspace?: string | undefined }>;
};

/** Adds what `config` names (the path it was loaded from is `configPath`) to `into`. */
export async function addToWatchSet(
  into: WatchSet,
  configPath: string,
  config: WatchedConfig,
): Promise<WatchSet> {
  const file = resolve(configPath);
  into.files.add(file);
  into.files.add(join(dirname(file), '.env'));
  const modules: string[] = [];
  for (const listener of config.listeners) {
    if (typeof listener.handler === 'string') modules.push(listener.handler);
    // An agent's own script (`listeners[].llm.script`), where the config has one.
    const script = (listener as { llm?: { script?: unknown } }).llm?.script;
    if (typeof script === 'string') into.files.add(script);
  }
  for (const backend of config.llm?.backends ?? []) {
    if (typeof backend.script === 'string') into.files.add(backend.script);
  }
  for (const entry of config.tool_modules ?? []) {
    const info = await stat(entry).catch(() => undefined);
    if (info?.isDirectory()) into.moduleFolders.add(entry);
    else into.files.add(entry); // a file, or one not there yet: its creation is a save
    // One entry that cannot be read (the reload says so) leaves the others watched.
    modules.push(...(await userToolModuleFiles([entry]).catch(() => [])));
  }
  const memo = new Map<string, readonly string[]>();
  for (const module of modules) {
    into.files.add(module);
    for (const imported of localImportClosure(module, memo)) into.files.add(imported);
  }
  const workspaces = [config.organism?.workspace, ...(config.mcp_servers ?? []).map((s) => s.workspace)]
    .filter((w): w is string => typeof w === 'string')
    .map((w) => resolve(w));
  for (const set of [into.files, into.moduleFolders]) {
    for (const path of set) {
      const workspace = workspaces.find((w) => inside(path, w));
      if (workspace === undefined) continue;
      set.delete(path);
      into.unwatched.set(path, workspace);
    }
  }
  return into;
}

function inside(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}
