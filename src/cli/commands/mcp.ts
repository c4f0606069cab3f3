/** `organism mcp`: the running daemon over MCP on stdin/stdout, for desktop MCP clients. */
import { UsageError } from '../../errors.ts';
import { CLIENT_HELP } from '../../server/client.ts';
import { parseClientCommand } from '../daemon-client.ts';
import type { CommandIo } from '../io.ts';

export const summary = 'serve the running organism to an MCP client over stdin/stdout (relays to POST /mcp)';

const HELP = `usage: organism mcp [--url URL] [--config FILE] [--token-env NAME]
       organism mcp login SERVER [--config FILE]   sign in to an OAuth MCP server of mcp_servers (--help there)

Speaks MCP on standard input and output, for desktop clients that start a program (Claude Desktop,
editors): every message is relayed to the running daemon's POST /mcp, so the client sees what the
daemon offers (listeners marked mcp: true, the tools of the mcp: identity, threads as resources)
under the daemon's token and its role (viewer lists, operator calls). Start the daemon first
('organism run'). Standard output carries only the protocol; problems go to standard error.

options:
${CLIENT_HELP}
  -h, --help            show this help

examples:
  npx organism mcp --config /home/me/support/organism.yaml
  a desktop client's entry: {"command": "npx", "args": ["organism", "mcp", "--config", "/abs/organism.yaml"]}`;

export async function run(argv: string[], io: CommandIo): Promise<number> {
  // `organism mcp login <server>`: the client side (src/mcp/client/oauth/login-command.ts).
  if (argv[0] === 'login')
    return (await import('../../mcp/client/oauth/login-command.ts')).run(argv.slice(1), io);
  const args = parseClientCommand(argv, io, HELP, {});
  if (!args) return 0;
  if (args.positionals.length > 0) throw new UsageError(`unexpected argument '${args.positionals[0]}'`);
  const { target } = await args.connect();
  const { runBridge } = await import('../../mcp/server/bridge.ts');
  await runBridge({
    url: target.url,
    token: target.token,
    log: (message) => io.err(`organism mcp: ${message}`),
  });
  return 0;
}
