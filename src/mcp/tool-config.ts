/**
 * The tool_config keys an MCP tool takes (besides rate_limit, timeout_ms, max_result_bytes):
 * `trusted` (its server's annotations count), `capability` (what it needs, named by the
 * listener), and the keys of the guard the operator set for it. No SDK here: `organism validate`
 * checks grants of MCP tools without starting their servers.
 */
import type { OrganismConfig } from '../config/types.ts';
import { CAPABILITIES, type ToolDefinition } from '../tools/types.ts';
import type { JsonSchema } from '../xml/json-schema.ts';
import { mcpServers, resolveServerConfig } from './config.ts';
import { splitQualified } from './names.ts';

const GUARD_KEYS: Record<string, Record<string, JsonSchema>> = {
  file: { allowed_paths: { type: 'array', items: { type: 'string' } } },
  web: {
    allowed_domains: { type: 'array', items: { type: 'string' } },
    blocked_domains: { type: 'array', items: { type: 'string' } },
    allowed_ports: { type: 'array', items: { type: 'integer' } },
    allow_loopback: { type: 'boolean' },
  },
  shell: {
    allowed_commands: { type: 'array', items: { type: 'string' } },
    blocked_commands: { type: 'array', items: { type: 'string' } },
    shell: { type: 'boolean' },
  },
  email: { allowed_recipients: { type: 'array', items: { type: 'string' } } },
};

export function mcpToolConfigSchema(guard: string | undefined): JsonSchema {
  return {
    type: 'object',
    properties: {
      trusted: { type: 'boolean' },
      capability: { enum: [...CAPABILITIES] },
      ...(guard ? GUARD_KEYS[guard] : {}),
    },
  };
}

/**
 * Stand-ins for the granted tools of configured servers, for checking grants and tool_config
 * without a connection (`organism validate`). A grant naming no configured server stays unknown.
 */
export function mcpPlaceholders(config: Pick<OrganismConfig, 'listeners'> & object): ToolDefinition[] {
  const servers = new Map(mcpServers(config).map((s) => [s.name, resolveServerConfig(s)]));
  const identity = ((config as { mcp?: { tools?: string[] } }).mcp?.tools ?? []) as string[];
  const names = new Set([...config.listeners.flatMap((l) => l.tools ?? []), ...identity]);
  const out: ToolDefinition[] = [];
  for (const name of names) {
    const parts = splitQualified(name);
    const server = parts ? servers.get(parts.server) : undefined;
    if (!parts || !server) continue;
    const guard = server.guards[parts.tool];
    out.push({
      name,
      description: `Tool ${parts.tool} of MCP server ${parts.server}.`,
      args: { type: 'object' },
      readOnly: false,
      capability: server.capabilities[parts.tool] ?? 'write',
      source: 'external',
      ...(guard ? { guard } : {}),
      config: mcpToolConfigSchema(guard),
      run: async () => {
        throw new Error('a placeholder is never run');
      },
    });
  }
  return out;
}
