/**
 * The size bound of organism.workspace (organism.workspace_max_bytes), and of each stdio MCP
 * server's own workspace (the same bound): a tool resource, so it lives
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

/** A stdio MCP server's workspace image, beside the organism's. */
export function serverImage(config: OrganismConfig, server: string): string {
  return join(config.organism.data_dir, 'volumes', `mcp-${server}.img`);
}

const reported = new WeakSet<Volume>();

/** `path` is `folder` or inside it (both absolute). */
function within(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** Why `dir` cannot be a volume of its own: it holds the data dir or organism.yaml. */
function holdsOwnFiles(config: OrganismConfig, dir: string): string | null {
  const ws = resolve(dir);
  const own = [config.organism.data_dir, ...(config.file ? [config.file] : [])].find((p) =>
    within(resolve(p), ws),
  );
  if (own === undefined) return null;
  return `it holds ${own}, which a volume mounted over it would hide; give it a folder of its own`;
}

export interface BoundFolder {
  /** The folder programs write. */
  dir: string;
  /** Its image file. */
  image: string;
  /** What it is, for messages: `organism.workspace`, `MCP server files's workspace`. */
  what: string;
  /** What may fill it, for the warning: `Commands and write_file`. */
  writers: string;
}

/**
 * Mounts (or finds mounted) the volume of `folder` for `resources`' life. Resolves to null when no
 * bound applies: organism.workspace_max_bytes is 0, or no volume can be mounted (warned about).
 */
export async function ensureVolume(
  config: OrganismConfig,
  folder: BoundFolder,
  resources: ResourceCache,
  warn: (message: string) => void,
): Promise<Volume | null> {
  const maxBytes = config.organism.workspace_max_bytes;
  if (!maxBytes) return null;
  const why = holdsOwnFiles(config, folder.dir) ?? volumeUnavailable();
  if (why) {
    warn(
      `${folder.what} (${folder.dir}) has no size bound: ${why}. ${folder.writers} can fill the disk it is on ` +
        `(with the data dir, journal and audit log, if they share it). Run the daemon as root for ` +
        `${WORKSPACE_SETTING} to apply, or set it to 0 to say no bound is wanted`,
    );
    return null;
  }
  const volume = await resources.get(
    `volume:${folder.dir}:${maxBytes}`,
    () => openVolume({ dir: folder.dir, image: folder.image, maxBytes, setting: WORKSPACE_SETTING }),
    (v) => v.release(),
  );
  // Once per volume, not again at every reload that keeps it.
  if (volume.note && !reported.has(volume)) warn(volume.note);
  reported.add(volume);
  return volume;
}

/**
 * organism.workspace's volume when some listener may write the workspace (see ensureVolume);
 * resolves to null at once when none may.
 */
export function workspaceVolumeFor(
  config: OrganismConfig,
  resources: ResourceCache,
  warn: (message: string) => void,
): Promise<Volume | null> {
  return writesWorkspace(config) ? ensureWorkspaceVolume(config, resources, warn) : Promise.resolve(null);
}

/** organism.workspace's volume (see ensureVolume). */
export function ensureWorkspaceVolume(
  config: OrganismConfig,
  resources: ResourceCache,
  warn: (message: string) => void,
): Promise<Volume | null> {
  const folder: BoundFolder = {
    dir: config.organism.workspace,
    image: workspaceImage(config),
    what: 'organism.workspace',
    writers: 'Commands and write_file',
  };
  return ensureVolume(config, folder, resources, warn);
}
