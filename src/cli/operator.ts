/**
 * The operator actions on a running daemon (`pause`, `resume`, `kill`, `reload`): one shape for
 * all of them. Exit codes: 0 done, 1 the daemon refused or could not be reached (its error
 * printed), 2 a usage mistake (the help's first line printed with it).
 */
import { type ConfigIssue, formatConfigIssue, UsageError } from '../errors.ts';
import { ApiCallError, CLIENT_HELP, type DaemonClient } from '../server/client.ts';
import { parseClientCommand } from './daemon-client.ts';
import type { CommandIo } from './io.ts';

export interface OperatorCommand {
  name: string;
  /** `usage: ...` lines and the description, without the options. */
  usage: string;
  /** The help's examples: lines, each indented two spaces. */
  examples: string;
  /** What the single argument names (`LISTENER`, `THREAD`), or undefined when there is none. */
  argument?: string;
  act(client: DaemonClient, argument: string, io: CommandIo, json: boolean): Promise<void>;
  /** Extra words for an API error (e.g. a did-you-mean); '' when there is nothing to add. */
  explain?(client: DaemonClient, argument: string, error: ApiCallError): Promise<string>;
}

export function helpOf(command: OperatorCommand): string {
  return `${command.usage}

options:
      --json            print the API's JSON answer
${CLIENT_HELP}
  -h, --help            show this help

examples:
${command.examples}`;
}

export async function runOperator(command: OperatorCommand, argv: string[], io: CommandIo): Promise<number> {
  const help = helpOf(command);
  let args: ReturnType<typeof parseClientCommand<{ json: { type: 'boolean' } }>>;
  let argument = '';
  try {
    args = parseClientCommand(argv, io, help, { json: { type: 'boolean' } });
    if (!args) return 0;
    const { positionals } = args;
    const wanted = command.argument === undefined ? 0 : 1;
    if (positionals.length !== wanted) {
      throw new UsageError(
        command.argument === undefined
          ? `unexpected argument '${positionals[0]}'`
          : positionals.length === 0
            ? `give the ${command.argument.toLowerCase()}`
            : `give one ${command.argument.toLowerCase()}, not ${positionals.length}`,
      );
    }
    argument = positionals[0] ?? '';
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`organism ${command.name}: ${error.message}`);
    io.err(`${help.split('\n')[0]} ('organism ${command.name} --help' for more)`);
    return 2;
  }
  const client = await args.connect();
  try {
    await command.act(client, argument, io, args.values.json === true);
    return 0;
  } catch (error) {
    if (!(error instanceof ApiCallError)) throw error;
    if (error.issues.length > 0) {
      // A refused reload: every problem once, with its place in the file.
      const count = `${error.issues.length} problem${error.issues.length === 1 ? '' : 's'}`;
      io.err(
        `organism ${command.name}: ${error.status} ${error.code}: refused, ${count}; nothing was changed`,
      );
      printIssues(error.issues, io);
      return 1;
    }
    const extra = command.explain ? await command.explain(client, argument, error).catch(() => '') : '';
    io.err(`organism ${command.name}: ${error.message}${extra}`);
    return 1;
  }
}

function printIssues(issues: ConfigIssue[], io: CommandIo): void {
  for (const issue of issues) io.err(`  ${formatConfigIssue(issue)}`);
}
