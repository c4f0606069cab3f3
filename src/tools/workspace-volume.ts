/**
 * The size bound of organism.workspace (organism.workspace_max_bytes): a tool resource, so it lives
 * as long as the tool services that use the workspace (the daemon's, across reloads that keep the
 * workspace; an `organism tools call`'s, for one call) and is released with them. It is opened when
 * the tool runtime is made, if some listener may write the workspace, so a problem shows at start
 * (or reload) rather than at the first command.
 *
 * Where no volume can be mounted (not root), the workspace is not bounded, and that is said at
 * start: never silently.
 */
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { OrganismConfig } from '../config/types.ts';
import { mcpIdentityGrants } from '../mcp/config.ts';
import { openVolume, type Volume, volumeUnavailable } from '../sandbox/volume/index.ts';
import type { ResourceCache } from './types.ts';

export const WORKSPACE_SETTING = 'organism.workspace_max_bytes';

/** Native tools that write into organism.workspace. */
const WRITES_WORKSPACE = new Set(['run_command', 'write_file']);

/** Whether some listener (or the `mcp:` identity) may write the workspace. */
export function writesWorkspace(config: OrganismConfig): boolean {
  return [...config.listeners, ...mcpIdentityGrants(config)].some((l) =>
    l.tools.some((tool) => WRITES_WORKSPACE.has(tool)),
  );
}

/** The workspace's image file: in the data dir, which no program sees. */
export function workspaceImage(config: OrganismConfig): string {
  return join(config.organism.data_dir, 'volumes', 'workspace.img');
}

const reported = new WeakSet<Volume>();

/** `path` is `folder` or inside it (both absolute). */
function within(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** Why the workspace cannot be a volume of its own: it holds the data dir or organism.yaml. */
function holdsOwnFiles(config: OrganismConfig): string | null {
  const ws = resolve(config.organism.workspace);
  const own = [config.organism.data_dir, ...(config.file ? [config.file] : [])].find((p) =>
    within(resolve(p), ws),
  );
  if (own === undefined) return null;
  return `it holds ${own}, which a volume mounted over it would hide; give the workspace a folder of its own (the default is <data_dir>/workspace)`;
}

/**
 * Mounts (or finds mounted) the workspace's volume for `resources`' life. Resolves to null when no
 * bound applies: workspace_max_bytes is 0, or volumes cannot be mounted here (warned about).
 */
export async function ensureWorkspaceVolume(
  config: OrganismConfig,
  resources: ResourceCache,
  warn: (message: string) => void,
): Promise<Volume | null> {
  const maxBytes = config.organism.workspace_max_bytes;
  if (!maxBytes) return null;
  const why = holdsOwnFiles(config) ?? volumeUnavailable();
  if (why) {
    warn(
      `organism.workspace (${config.organism.workspace}) has no size bound: ${why}. Commands and write_file ` +
        `can fill the disk it is on (with the data dir, journal and audit log, if they share it). Run the ` +
        `daemon as root for ${WORKSPACE_SETTING} to apply, or set it to 0 to say no bound is wanted`,
    );
    return null;
  }
  const volume = await resources.get(
    `workspace-volume:${config.organism.workspace}:${maxBytes}`,
    () =>
      openVolume({
        dir: config.organism.workspace,
        image: workspaceImage(config),
        maxBytes,
        setting: WORKSPACE_SETTING,
      }),
    (v) => v.release(),
  );
  // Once per volume, not again at every reload that keeps it.
  if (volume.note && !reported.has(volume)) warn(volume.note);
  reported.add(volume);
  return volume;
}
