/**
 * The SDK transport for one configured server. A stdio server is started inside the run_command
 * sandbox (src/sandbox): its own workspace as the one writable folder, the daemon's data dir,
 * config file, .env, manifest and key files covered, no network unless configured, and an
 * environment holding only PATH, HOME, LANG and the `*_env` values configured for it. A Streamable
 * HTTP server gets its bearer token from `token_env` and the configured headers, and is never the
 * daemon's own API (its /mcp would let an agent act as a person): that URL is refused before the
 * first request and every request after, redirects included (guard/own-api.ts).
 */
import { mkdirSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { OrganismConfig } from '../../config/types.ts';
import { McpError } from '../../errors.ts';
import { ownApiAt } from '../../guard/own-api.ts';
import { programReadOnlyPaths, sandboxFor } from '../../sandbox/index.ts';
import { type ResolvedServerConfig, serverEnvironment } from '../config.ts';
import { serverWorkspace, serverWorkspaceProblem } from '../workspace.ts';
import { oauthFetch } from './oauth/fetch.ts';
import { noUserAgent, OrganismOAuthProvider, type UserAgent } from './oauth/provider.ts';
import { memoryOAuthStore, type OAuthStore } from './oauth/store.ts';

export interface TransportDeps {
  config: OrganismConfig;
  /** Where `*_env` values and ORGANISM_BWRAP are read. */
  env: NodeJS.ProcessEnv;
  /** Where OAuth tokens and registrations are kept (the daemon: its sealed runtime state); default: this process only. */
  oauthStore?: OAuthStore;
  /** Who signs a person in for the authorization-code flow; default: nobody (`organism mcp login` says how). */
  userAgent?: (server: string) => UserAgent;
}

/** What no stdio server may see: the daemon's data dir, its config and every key or log file it names. */
export function hiddenPaths(config: OrganismConfig): string[] {
  const paths = [config.organism.data_dir];
  if (config.file) paths.push(config.file, join(dirname(config.file), '.env'));
  for (const section of [config.tools, config.audit] as unknown[]) {
    if (typeof section !== 'object' || section === null) continue;
    for (const [key, value] of Object.entries(section)) {
      if (typeof value === 'string' && /(^|_)(path|file|manifest)$/.test(key)) paths.push(value);
    }
  }
  return paths;
}

export interface BuiltTransport {
  transport: Transport;
  /** stdio: the child's stderr, for the reason a server died. */
  stderr?: NodeJS.ReadableStream | null;
}

export async function buildTransport(
  server: ResolvedServerConfig,
  deps: TransportDeps,
): Promise<BuiltTransport> {
  if (server.url !== undefined) return httpTransport(server, deps);
  return stdioTransport(server, deps);
}

async function httpTransport(server: ResolvedServerConfig, deps: TransportDeps): Promise<BuiltTransport> {
  const url = new URL(server.url as string);
  await refuseOwnApi(server.name, url);
  const headers: Record<string, string> = { ...server.headers };
  if (server.token_env) {
    const token = deps.env[server.token_env];
    if (!token)
      throw new McpError('mcp.config', `environment variable ${server.token_env} (token_env) is not set`);
    headers.Authorization = `Bearer ${token}`;
  }
  const { StreamableHTTPClientTransport } = await import(
    '@modelcontextprotocol/sdk/client/streamableHttp.js'
  );
  // Checked again at each request: the daemon may have started listening since. fetch follows no
  // redirect itself: the SDK follows those it accepts (same origin) with another request, checked
  // here too.
  const guardedFetch = async (input: string | URL, init?: RequestInit): Promise<Response> => {
    await refuseOwnApi(server.name, new URL(String(input)));
    return fetch(input, { ...init, redirect: init?.redirect === 'error' ? 'error' : 'manual' });
  };
  // OAuth requests (discovery, registration, token) go through the same guard.
  const authFetch = server.auth
    ? oauthFetch(
        new OrganismOAuthProvider({
          server: server.name,
          url: url.href,
          auth: server.auth,
          configFile: deps.config.file,
          env: deps.env,
          store: deps.oauthStore ?? memoryOAuthStore(),
          agent: (deps.userAgent ?? noUserAgent)(server.name),
        }),
        url,
        guardedFetch,
      )
    : guardedFetch;
  return {
    transport: new StreamableHTTPClientTransport(url, { requestInit: { headers }, fetch: authFetch }),
  };
}

async function refuseOwnApi(name: string, url: URL): Promise<void> {
  const endpoint = await ownApiAt(url);
  if (!endpoint) return;
  throw new McpError(
    'mcp.refused',
    `MCP server ${name}: ${url.origin} is this organism's own API, which no tool may call (it would act as a person); point its url at another server`,
    { server: name, url: url.origin },
  );
}

async function stdioTransport(server: ResolvedServerConfig, deps: TransportDeps): Promise<BuiltTransport> {
  const { config, env: from } = deps;
  const { env, missing } = serverEnvironment(server, from);
  if (missing.length > 0)
    throw new McpError(
      'mcp.config',
      `environment variable ${missing.join(', ')} is not set (mcp_servers ${server.name}.env)`,
    );
  // One rule, shared with `organism validate` (src/mcp/workspace.ts).
  const problem = serverWorkspaceProblem(server, config);
  if (problem) throw new McpError('mcp.config', problem);
  const workspace = serverWorkspace(server, config);
  mkdirSync(workspace, { recursive: true, mode: 0o700 });
  const command = server.command as string;
  // `./bin/x` or `node_modules/.bin/x` is the user's project's, wherever the daemon runs from.
  const program =
    command.includes('/') && !isAbsolute(command) ? resolve(dirname(config.file), command) : command;
  const sandbox = sandboxFor(server.sandbox, from);
  const unavailable = sandbox.unavailable();
  if (unavailable) throw new McpError('mcp.unavailable', `its sandbox cannot run: ${unavailable}`);
  // `./servers/x.mjs` in args is the project's too (the server's cwd is its own workspace).
  const fromConfig = (arg: string) =>
    arg.startsWith('./') || arg.startsWith('../') ? resolve(dirname(config.file), arg) : arg;
  const argv = [program, ...server.args.map(fromConfig)];
  const hide = hiddenPaths(config);
  const plan = sandbox.plan({
    argv,
    cwd: workspace,
    workspace,
    hide,
    // The server's script and the node_modules it loads, when they sit in a covered folder (the
    // user's project is the config's folder) or under /tmp.
    readOnly: programReadOnlyPaths(argv, hide),
    envAllowlist: Object.keys(env),
    from: env,
    network: server.network,
    limits: { maxProcesses: server.max_processes, maxMemoryMb: server.max_memory_mb },
  });
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const [bin = program, ...args] = plan.argv;
  const transport = new StdioClientTransport({
    command: bin,
    args,
    cwd: plan.cwd,
    env: plan.env as Record<string, string>,
    stderr: 'pipe',
  });
  return { transport, stderr: transport.stderr as NodeJS.ReadableStream | null };
}
