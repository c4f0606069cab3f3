/**
 * `organism mcp login <server>`: the authorization-code flow's one step that needs a person. A
 * daemon cannot open a browser, so this command does: it connects to the server as the daemon
 * would (same connection, same OAuth provider), and when the server wants a sign-in it prints the
 * authorization URL, listens on 127.0.0.1:<auth.redirect_port> for the browser's redirect (state
 * checked), and stores the tokens in the organism's runtime state. From then on the daemon uses
 * them and refreshes them itself; only a refused refresh needs another login.
 */
import { createServer } from 'node:http';
import { auditKeyOptions, loadAuditKeys } from '../../../audit/key.ts';
import type { OrganismConfig } from '../../../config/types.ts';
import { McpError } from '../../../errors.ts';
import { createRuntimeState, stateLocation } from '../../../state/index.ts';
import { mcpServers, resolveServerConfig } from '../../config.ts';
import { McpConnection } from '../connection.ts';
import type { UserAgent } from './provider.ts';
import { stateOAuthStore } from './store.ts';

export interface LoginOptions {
  config: OrganismConfig;
  server: string;
  env: NodeJS.ProcessEnv;
  /** Where the URL to open is told. */
  say(line: string): void;
  /** How long to wait for the person, in ms. */
  timeoutMs: number;
}

/** Signs in to one configured server; resolves with how many tools it then lists. */
export async function mcpLogin(options: LoginOptions): Promise<{ tools: number }> {
  const { config, env } = options;
  const names = mcpServers(config).map((s) => s.name);
  const found = mcpServers(config).find((s) => s.name === options.server);
  if (!found)
    throw new McpError(
      'mcp.config',
      `no MCP server named '${options.server}' in mcp_servers (${names.length > 0 ? names.join(', ') : 'none configured'})`,
    );
  const server = resolveServerConfig(found);
  if (!server.auth)
    throw new McpError(
      'mcp.config',
      `MCP server ${server.name} has no auth: section: there is nothing to sign in to`,
    );
  if (server.auth.grant !== 'authorization_code')
    throw new McpError(
      'mcp.config',
      `MCP server ${server.name} uses grant: ${server.auth.grant}: the organism signs itself in, no login needed`,
    );
  const ring = await loadAuditKeys(auditKeyOptions(config, { env, create: true }));
  if (!ring) throw new McpError('mcp.config', 'no audit key to seal the tokens with');
  const state = createRuntimeState(config, { keys: () => ring.keys });
  try {
    await state.store();
  } catch (error) {
    const where = stateLocation(config);
    throw new McpError(
      'mcp.unavailable',
      where.kind === 'embedded'
        ? `cannot open the organism's runtime state (${(error as Error).message}): a running daemon holds it; stop the daemon, log in, start it again`
        : `cannot open the organism's runtime state: ${(error as Error).message}`,
    );
  }
  const connection = new McpConnection(
    { ...server, start: 'daemon', restart_initial_ms: 3_600_000, startup_timeout_ms: options.timeoutMs },
    {
      config,
      env,
      oauthStore: stateOAuthStore(async () => state),
      userAgent: () => loopbackAgent(server.name, server.auth?.redirect_port ?? 0, options),
    },
  );
  try {
    await connection.start();
    return { tools: connection.tools.size };
  } finally {
    await connection.close();
    await state.close();
  }
}

/** A person's browser, sent to the URL and caught coming back on the loopback port. */
function loopbackAgent(server: string, port: number, options: LoginOptions): UserAgent {
  return {
    authorize(url, expect) {
      return new Promise<string>((resolve, reject) => {
        const listener = createServer((req, res) => {
          const back = new URL(req.url ?? '/', expect.redirectUri);
          if (back.pathname !== new URL(expect.redirectUri).pathname) {
            res.writeHead(404).end();
            return;
          }
          const code = back.searchParams.get('code');
          const problem =
            back.searchParams.get('state') !== expect.state
              ? 'the redirect does not carry the state this login sent (another browser tab or an old link)'
              : code
                ? undefined
                : `the authorization server said ${back.searchParams.get('error') ?? 'nothing'}: ${back.searchParams.get('error_description') ?? 'no code'}`;
          res
            .writeHead(problem ? 400 : 200, { 'content-type': 'text/plain; charset=utf-8' })
            .end(
              problem ? `Sign-in failed: ${problem}\n` : `Signed in to ${server}. You can close this tab.\n`,
            );
          finish(problem ? new McpError('mcp.unavailable', `sign-in to ${server} failed: ${problem}`) : code);
        });
        const timer = setTimeout(
          () =>
            finish(
              new McpError(
                'mcp.timeout',
                `nobody signed in to ${server} within ${options.timeoutMs / 1000} s`,
              ),
            ),
          options.timeoutMs,
        );
        const finish = (outcome: string | null | Error) => {
          clearTimeout(timer);
          listener.close();
          listener.closeAllConnections();
          if (typeof outcome === 'string') resolve(outcome);
          else reject(outcome ?? new Error('no code'));
        };
        listener.on('error', (error: NodeJS.ErrnoException) =>
          finish(
            new McpError(
              'mcp.unavailable',
              `cannot listen on 127.0.0.1:${port} for the sign-in redirect (${error.code ?? error.message}); free the port or set mcp_servers ${server}.auth.redirect_port`,
            ),
          ),
        );
        listener.listen(port, '127.0.0.1', () => {
          options.say(`To sign in to MCP server ${server}, open this URL in a browser:\n\n  ${url.href}\n`);
          options.say(`Waiting for the redirect to ${expect.redirectUri} ...`);
        });
      });
    },
  };
}
