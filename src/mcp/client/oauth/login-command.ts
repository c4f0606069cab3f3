/** `organism mcp login <server>`: sign in once to an OAuth-protected MCP server (login.ts). */

import { CONFIG_OPTION, parseCommandArgs } from '../../../cli/args.ts';
import type { CommandIo } from '../../../cli/io.ts';
import { loadConfig } from '../../../config/index.ts';
import { UsageError } from '../../../errors.ts';
import { mcpLogin } from './login.ts';

const HELP = `usage: organism mcp login SERVER [--config FILE] [--timeout SECONDS]

Signs in to the MCP server SERVER of mcp_servers (auth: with grant: authorization_code): prints the
authorization URL to open in a browser, catches the redirect on 127.0.0.1:<auth.redirect_port>, and
keeps the tokens in the organism's runtime state (sealed and encrypted, out of every tool's reach).
The daemon then uses them and refreshes them. With the embedded state (no Redis), stop the daemon
first: it holds the state while it runs.

options:
  -c, --config FILE     organism.yaml to use (default ./organism.yaml)
      --timeout SECONDS how long to wait for the sign-in (default 300)
  -h, --help            show this help

examples:
  npx organism mcp login github          # github: a server of mcp_servers with auth`;

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { ...CONFIG_OPTION, timeout: { type: 'string' } });
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  const [server, extra] = positionals;
  if (!server) throw new UsageError('organism mcp login needs the name of a server of mcp_servers');
  if (extra !== undefined) throw new UsageError(`unexpected argument '${extra}'`);
  const seconds = values.timeout === undefined ? 300 : Number(values.timeout);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new UsageError(`--timeout must be a number of seconds above 0, not '${values.timeout}'`);
  // The env of the config (its .env beside organism.yaml under the process's): where the daemon reads *_env too.
  const { config, env } = await loadConfig(values.config, { loadModules: false });
  const { tools } = await mcpLogin({
    config,
    server,
    env,
    say: (line) => io.out(line),
    timeoutMs: seconds * 1000,
  });
  io.out(
    `Signed in to ${server}: ${tools} tools listed. The daemon uses these tokens from its next connection.`,
  );
  return 0;
}
