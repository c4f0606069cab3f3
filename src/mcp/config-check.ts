/**
 * What the schema cannot say about `mcp_servers:` and `mcp:`: names unique, exactly one of
 * `command` (stdio) or `url` (Streamable HTTP) per server, and no listener named `mcp` when the `mcp:` identity exists (its calls would look alike in audit).
 */
import type { ConfigSource } from '../config/source.ts';
import type { ConfigIssue } from '../errors.ts';
import { MCP_IDENTITY } from './config.ts';

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
