/**
 * `organism dashboard`: the running daemon's dashboard address, signed in with the token the CLI
 * would use (ORGANISM_TOKEN, else the local token of the daemon's data dir), after checking the
 * daemon accepts it. The link is a credential, printed for the person who asked.
 */
import { UsageError } from '../../errors.ts';
import { ApiCallError, CLIENT_HELP } from '../../server/client.ts';
import { signedInLink } from '../../server/local-token.ts';
import { parseClientCommand } from '../daemon-client.ts';
import type { CommandIo } from '../io.ts';

export const summary = "print a signed-in link to the running daemon's dashboard";

const HELP = `usage: organism dashboard [--url URL] [--config FILE] [--token-env NAME]

Prints the address of the running daemon's dashboard with the API token in its fragment
(http://127.0.0.1:7777/#token=...): opened in a browser, the page signs in and forgets the link.
The token is ORGANISM_TOKEN's (or --token-env's), else, on the daemon's machine, the local token of
its data dir (<data_dir>/api-token, admin). Anyone with the link can act as that token: do not
paste it into chats or tickets. Exits 1 when the daemon cannot be reached or refuses the token.

options:
${CLIENT_HELP}
  -h, --help            show this help

examples:
  npx organism dashboard`;

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const args = parseClientCommand(argv, io, HELP, {});
  if (!args) return 0;
  if (args.positionals.length > 0) throw new UsageError(`unexpected argument '${args.positionals[0]}'`);
  const client = await args.connect();
  const { token, tokenEnv } = client.target;
  if (!token) {
    io.err(
      `organism dashboard: no token: set ${tokenEnv}, or run this on the daemon's machine with --config of its organism.yaml`,
    );
    return 1;
  }
  try {
    await client.get('/api/v1/session');
  } catch (error) {
    if (!(error instanceof ApiCallError)) throw error;
    io.err(`organism dashboard: ${error.message}`);
    return 1;
  }
  // A 404 for the page (asked with the token: without, any unknown path is a 401) is a daemon with
  // server.dashboard: false.
  const page = await fetch(`${client.target.url}/`, {
    headers: { authorization: `Bearer ${token}` },
  }).catch(() => undefined);
  if (page?.status === 404) {
    io.err('organism dashboard: this daemon serves no dashboard (server.dashboard: false)');
    return 1;
  }
  await page?.body?.cancel();
  io.out(signedInLink(client.target.url, token));
  return 0;
}
