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
import { dirname, join, resolve } from 'node:path';
import type { OrganismConfig } from '../config/types.ts';
import { isInside } from '../guard/path-forms.ts';
import { organismCodeFiles } from '../tools/code-files.ts';

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
  // The organism's code, as the file guard knows it: handlers, tool modules, scripts, their imports.
  const code = await organismCodeFiles(config);
  for (const path of code.files.keys()) into.files.add(path);
  for (const folder of code.folders.keys()) into.moduleFolders.add(folder);
  const workspaces = [config.organism?.workspace, ...(config.mcp_servers ?? []).map((s) => s.workspace)]
    .filter((w): w is string => typeof w === 'string')
    .map((w) => resolve(w));
  for (const set of [into.files, into.moduleFolders]) {
    for (const path of set) {
      const workspace = workspaces.find((w) => isInside(w, path));
      if (workspace === undefined) continue;
      set.delete(path);
      into.unwatched.set(path, workspace);
    }
  }
  return into;
}
