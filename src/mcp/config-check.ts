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
    if (isObject(server.auth)) issues.push(...checkAuth(server, [...at, 'auth'], source));
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

/** `auth:` combinations the schema cannot refuse: each says what is missing and where. */
function checkAuth(server: Raw, at: Array<string | number>, source: ConfigSource): ConfigIssue[] {
  const auth = server.auth as Raw;
  const issues: ConfigIssue[] = [];
  const say = (key: string | null, message: string) =>
    issues.push(source.issue(key === null ? at : [...at, key], message, key === null ? 'key' : 'value'));
  if (server.url === undefined)
    say(null, 'auth (OAuth) is for a Streamable HTTP server (url), not a stdio one');
  if (server.token_env !== undefined)
    say(null, 'give either token_env (a fixed bearer token) or auth (OAuth), not both');
  const method = auth.client_auth;
  if (auth.grant === 'client_credentials' && auth.client_id === undefined)
    say('grant', 'client_credentials needs the pre-registered client_id');
  if (auth.grant === 'client_credentials' && method === 'none')
    say('client_auth', 'client_credentials needs a client that authenticates: not none');
  if (
    auth.grant === 'client_credentials' &&
    auth.client_secret_env === undefined &&
    auth.private_key_file === undefined
  )
    say(
      'grant',
      'client_credentials needs client_secret_env or private_key_file (the client authenticates as itself)',
    );
  if (
    (method === 'client_secret_basic' || method === 'client_secret_post') &&
    auth.client_secret_env === undefined
  )
    say('client_auth', `${method} needs client_secret_env (the environment variable holding the secret)`);
  if (method === 'private_key_jwt' && auth.private_key_file === undefined)
    say('client_auth', 'private_key_jwt needs private_key_file (the PEM key signing the assertion)');
  if (auth.private_key_file !== undefined && method !== undefined && method !== 'private_key_jwt')
    say(
      'private_key_file',
      `private_key_file is only used by client_auth: private_key_jwt (it is ${method})`,
    );
  if (auth.client_secret_env !== undefined && auth.client_id === undefined)
    say('client_secret_env', 'a client secret belongs to a pre-registered client: give client_id too');
  return issues;
}
