/**
 * What the schema cannot say about `mcp_servers:` and `mcp:`: names unique, exactly one of
 * `command` (stdio) or `url` (Streamable HTTP) per server, and no listener named `mcp` when the `mcp:` identity exists (its calls would look alike in audit).
 */
import type { ConfigSource } from '../config/source.ts';
import type { OrganismConfig } from '../config/types.ts';
import type { ConfigIssue } from '../errors.ts';
import { MCP_IDENTITY, mcpServers } from './config.ts';
import { serverWorkspaceProblem } from './workspace.ts';

type Raw = Record<string, unknown>;
const isObject = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);

export function checkMcpSections(data: unknown, source: ConfigSource): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (!isObject(data)) return issues;
  const servers = Array.isArray(data.mcp_servers) ? data.mcp_servers : [];
  const seen = new Map<string, number>();
  servers.forEach((server, i) => {
    if (!isObject(server)) return;
    const at = ['mcp_servers', i];
    if (typeof server.name === 'string') {
      const first = seen.get(server.name);
      if (first !== undefined)
        issues.push(
          source.issue(
            [...at, 'name'],
            `duplicate MCP server name '${server.name}' (also mcp_servers[${first}])`,
          ),
        );
      else seen.set(server.name, i);
    }
    const stdio = server.command !== undefined;
    const http = server.url !== undefined;
    if (stdio === http) {
      issues.push(
        source.issue(
          at,
          'an MCP server needs exactly one of command (stdio) or url (Streamable HTTP)',
          'key',
        ),
      );
    }
  });
  if (data.mcp !== undefined && Array.isArray(data.listeners)) {
    data.listeners.forEach((listener, i) => {
      if (isObject(listener) && listener.name === MCP_IDENTITY)
        issues.push(
          source.issue(
            ['listeners', i, 'name'],
            `'${MCP_IDENTITY}' is the identity of MCP clients (the mcp: section); name this listener otherwise`,
          ),
        );
    });
  }
  return issues;
}

/**
 * Stdio servers whose workspace the sandbox would refuse at their start (the data dir or a folder
 * of it): told by `organism validate` by the same rule, before anything runs. Needs the loaded
 * config, where data_dir is resolved.
 */
export function checkMcpWorkspaces(config: Pick<OrganismConfig, 'file' | 'organism'>): ConfigIssue[] {
  return mcpServers(config).flatMap((server, i) => {
    if (server.command === undefined) return [];
    const problem = serverWorkspaceProblem(server, config);
    if (problem === undefined) return [];
    const path = `mcp_servers[${i}]${server.workspace === undefined ? '' : '.workspace'}`;
    return [{ file: config.file, path, message: `MCP server '${server.name}': ${problem}` }];
  });
}
