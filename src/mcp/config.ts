/**
 * The `mcp_servers:` and `mcp:` sections of organism.yaml as the runtime uses them, with their
 * defaults in one place (organism.schema.json documents the same defaults). Imports nothing of
 * the SDK, so the config, validate and the grant check never load it.
 */

import type { McpServerAuthSection, McpServerSection, TrustLevel } from '../config/types.ts';
import type { Capability, GuardKind } from '../tools/types.ts';

/** One entry of `mcp_servers:` as organism.yaml has it (the schema checked the names below). */
export type McpServerConfig = Omit<McpServerSection, 'capabilities' | 'guards'> & {
  /** Capability each tool needs, as the operator says (by the server's tool name). */
  capabilities?: Record<string, Capability>;
  /** Guard judging each tool's calls (by the server's tool name). */
  guards?: Record<string, GuardKind>;
};

/** A server config with every default applied. */
export type ResolvedServerConfig = Required<
  Pick<
    McpServerConfig,
    | 'name'
    | 'args'
    | 'env'
    | 'sandbox'
    | 'network'
    | 'max_memory_mb'
    | 'max_processes'
    | 'headers'
    | 'timeout_ms'
    | 'startup_timeout_ms'
    | 'exclude'
    | 'start'
    | 'capabilities'
    | 'guards'
    | 'restart_initial_ms'
    | 'restart_max_ms'
    | 'elicitation'
  >
> &
  Pick<McpServerConfig, 'command' | 'url' | 'token_env' | 'include' | 'workspace'> & {
    auth?: ResolvedAuthConfig;
  };

/** `auth:` with its defaults applied. */
export type ResolvedAuthConfig = Required<
  Pick<McpServerAuthSection, 'grant' | 'jwt_algorithm' | 'client_name' | 'redirect_port'>
> &
  Omit<McpServerAuthSection, 'grant' | 'jwt_algorithm' | 'client_name' | 'redirect_port'>;

export function defaultMcpAuthOptions(): Omit<ResolvedAuthConfig, 'client_id'> {
  return {
    grant: 'authorization_code',
    jwt_algorithm: 'RS256',
    client_name: 'organism',
    redirect_port: 33418,
  };
}

export function defaultMcpServerOptions(): Omit<ResolvedServerConfig, 'name'> {
  return {
    args: [],
    env: {},
    sandbox: 'bubblewrap',
    network: false,
    max_memory_mb: 4096,
    max_processes: 256,
    headers: {},
    timeout_ms: 30_000,
    startup_timeout_ms: 15_000,
    exclude: [],
    start: 'daemon',
    capabilities: {},
    guards: {},
    restart_initial_ms: 500,
    restart_max_ms: 30_000,
    elicitation: 'defaults',
  };
}

export function resolveServerConfig(server: McpServerConfig): ResolvedServerConfig {
  const defined = Object.fromEntries(Object.entries(server).filter(([, v]) => v !== undefined));
  const resolved = { ...defaultMcpServerOptions(), ...defined } as ResolvedServerConfig;
  if (server.auth) {
    const auth = Object.fromEntries(Object.entries(server.auth).filter(([, v]) => v !== undefined));
    resolved.auth = { ...defaultMcpAuthOptions(), ...auth } as ResolvedAuthConfig;
  }
  return resolved;
}

/** `mcp:`: the identity MCP clients act as when they call native tools, and serving limits. */
export interface McpIdentityConfig {
  tools: string[];
  tool_config: Record<string, Record<string, unknown>>;
  trust: TrustLevel;
  /** How long a listener call waits for the reply or the end of the thread. */
  call_timeout_ms: number;
}

/** The name MCP clients' tool calls carry in audit and grants. */
export const MCP_IDENTITY = 'mcp';

export function defaultMcpIdentity(): McpIdentityConfig {
  return { tools: [], tool_config: {}, trust: 'medium', call_timeout_ms: 60_000 };
}

/** The configured servers (none when the section is absent). */
export function mcpServers(config: object): McpServerConfig[] {
  const servers = (config as { mcp_servers?: unknown }).mcp_servers;
  return Array.isArray(servers) ? (servers as McpServerConfig[]) : [];
}

export function mcpIdentity(config: object): McpIdentityConfig {
  const section = ((config as { mcp?: unknown }).mcp ?? {}) as Partial<McpIdentityConfig>;
  return { ...defaultMcpIdentity(), ...section };
}

/** The server's environment: `NAME_env: VAR` read from `from`; the names of unset variables in `missing`. */
export function serverEnvironment(
  server: Pick<McpServerConfig, 'env'>,
  from: NodeJS.ProcessEnv,
): { env: Record<string, string>; missing: string[] } {
  const env: Record<string, string> = {};
  const missing: string[] = [];
  for (const [key, variable] of Object.entries(server.env ?? {})) {
    const name = key.replace(/_env$/, '');
    const value = from[variable];
    if (value === undefined) missing.push(variable);
    else env[name] = value;
  }
  return { env, missing };
}

/** The `mcp:` identity as the dispatcher's listener entry (none when the section is absent). */
export function mcpIdentityGrants(config: object): Array<{
  name: string;
  tools: string[];
  tool_config: Record<string, Record<string, unknown>>;
  trust: TrustLevel;
}> {
  const section = (config as { mcp?: unknown }).mcp;
  if (section === undefined || section === null) return [];
  const identity = mcpIdentity(config);
  return [
    { name: MCP_IDENTITY, tools: identity.tools, tool_config: identity.tool_config, trust: identity.trust },
  ];
}

/**
 * Problems found in the `mcp:` identity's grants, which the dispatcher checks as one more
 * listener after the file's: their `listeners[<n>]` paths, renamed to the `mcp` section they
 * come from.
 */
export function renameIdentityIssues<T extends { path: string }>(
  issues: readonly T[],
  listenerCount: number,
): T[] {
  const prefix = `listeners[${listenerCount}]`;
  return issues.map((issue) =>
    issue.path === prefix || issue.path.startsWith(`${prefix}.`)
      ? { ...issue, path: `mcp${issue.path.slice(prefix.length)}` }
      : issue,
  );
}
