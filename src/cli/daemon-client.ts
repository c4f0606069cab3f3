/**
 * The start every command that talks to a running daemon shares (`status`, `threads`, `tail`): its
 * own flags plus --config, --url, --token-env and -h, help printed on request, and the client made
 * only after the command has checked its flags (so a bad flag is named before the config is read).
 */
import type { ParseArgsConfig } from 'node:util';
import { CLIENT_OPTIONS, DaemonClient, resolveTarget } from '../server/client.ts';
import { CONFIG_OPTION, parseCommandArgs } from './args.ts';
import type { CommandIo } from './io.ts';

/**
 * Parses `argv` with the client flags and `options`. Returns undefined after printing `help` when
 * -h/--help was given (the command then exits 0); otherwise the flags and `connect()`, which
 * resolves the daemon's address and token.
 */
export function parseClientCommand<T extends NonNullable<ParseArgsConfig['options']>>(
  argv: string[],
  io: CommandIo,
  help: string,
  options: T,
) {
  const parsed = parseCommandArgs(argv, { ...CONFIG_OPTION, ...CLIENT_OPTIONS, ...options });
  // The generic T hides the shape of `values` in here; the flags named above are certainly in it.
  const values = parsed.values as { help?: boolean } & Parameters<typeof resolveTarget>[0];
  if (values.help) {
    io.out(help);
    return undefined;
  }
  return { ...parsed, connect: async () => new DaemonClient(await resolveTarget(values)) };
}
