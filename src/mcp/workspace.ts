/**
 * Where a stdio MCP server works, and the one rule on where it may not: decided here once, so the
 * server's start (src/mcp/client/transport.ts) and `organism validate` refuse the same folders.
 */
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { OrganismConfig } from '../config/types.ts';
import type { McpServerConfig } from './config.ts';

type Where = Pick<OrganismConfig, 'file'> & { organism: Pick<OrganismConfig['organism'], 'data_dir'> };

/** The server's workspace: as configured (relative to organism.yaml), else <data_dir>/mcp/<name>. */
export function serverWorkspace(server: Pick<McpServerConfig, 'name' | 'workspace'>, config: Where): string {
  if (server.workspace) return resolve(dirname(config.file), server.workspace);
  return join(config.organism.data_dir, 'mcp', server.name);
}

/** `path` is `folder` or inside it (both absolute). */
function isWithin(path: string, folder: string): boolean {
  const rel = relative(folder, resolve(path));
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * Why the server may not work where it would, or undefined. The sandbox binds the workspace back,
 * writable, over any cover: a workspace that is the data dir, or a folder in it other than one
 * under the servers' own (mcp/), would show the server the audit log, the signing key and the
 * stores. The text starts with "its workspace" so callers put the server's name before it.
 */
export function serverWorkspaceProblem(
  server: Pick<McpServerConfig, 'name' | 'workspace'>,
  config: Where,
): string | undefined {
  const workspace = serverWorkspace(server, config);
  const dataDir = resolve(config.organism.data_dir);
  const own = join(dataDir, 'mcp');
  if (!isWithin(workspace, dataDir) || (isWithin(workspace, own) && workspace !== own)) return undefined;
  return `its workspace ${workspace} is the daemon's data dir or a folder in it (mcp_servers ${server.name}.workspace; data dir ${dataDir}): the server would see the audit log, keys and stores there. Give it a folder of its own outside the data dir, or leave workspace unset (${join(own, server.name)})`;
}
