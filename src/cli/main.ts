/**
 * `organism <command>`: each command is one module in ./commands exporting `run(argv, io)`.
 * Exit codes: 0 success, 1 error, 2 refused (tools call) or as the command documents.
 */
import { OrganismError, UsageError } from '../errors.ts';
import type { CommandIo } from './io.ts';
import { processIo } from './io.ts';

type CommandModule = { run(argv: string[], io: CommandIo): Promise<number>; summary: string };

const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  init: () => import('./commands/init.ts'),
  run: () => import('./commands/run.ts'),
  dev: () => import('./commands/dev.ts'),
  validate: () => import('./commands/validate.ts'),
  send: () => import('./commands/send.ts'),
  describe: () => import('./commands/describe.ts'),
  types: () => import('./commands/types.ts'),
  tools: () => import('./commands/tools.ts'),
  guard: () => import('./commands/guard.ts'),
  audit: () => import('./commands/audit.ts'),
  approvals: () => import('./commands/approvals.ts'),
  status: () => import('./commands/status.ts'),
  threads: () => import('./commands/threads.ts'),
  tail: () => import('./commands/tail.ts'),
  pause: () => import('./commands/pause.ts'),
  resume: () => import('./commands/resume.ts'),
  kill: () => import('./commands/kill.ts'),
  reload: () => import('./commands/reload.ts'),
  mcp: () => import('./commands/mcp.ts'),
  dashboard: () => import('./commands/dashboard.ts'),
};

/** The commands in the order `organism --help` lists them (the CLI reference follows it too). */
export const COMMAND_NAMES: readonly string[] = Object.keys(COMMANDS);

export async function main(argv: string[], io: CommandIo = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(await usage());
    return name === undefined ? 1 : 0;
  }
  if (name === '--version' || name === '-v') {
    // Read, not imported: a JSON import would make tsc copy package.json into dist/.
    const { readFileSync } = await import('node:fs');
    const { packageFile } = await import('../package-root.ts');
    io.out((JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string }).version);
    return 0;
  }
  const load = COMMANDS[name];
  if (!load) {
    io.err(`organism: unknown command '${name}'. Run 'organism --help' for the list.`);
    return 1;
  }
  try {
    const command = await load();
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`organism ${name}: ${error.message}`);
      return 1;
    }
    if (error instanceof OrganismError) {
      io.err(`organism ${name}: ${error.message}`);
      return 1;
    }
    io.err(`organism ${name}: ${(error as Error)?.stack ?? String(error)}`);
    return 1;
  }
}

async function usage(): Promise<string> {
  const lines = ['usage: organism <command> [options]', '', 'commands:'];
  for (const [name, load] of Object.entries(COMMANDS)) {
    const summary = await load().then(
      (m) => m.summary,
      () => '',
    );
    lines.push(`  ${name.padEnd(10)} ${summary}`);
  }
  lines.push(
    '',
    "Every command takes --config FILE (default ./organism.yaml). 'organism <command> --help' for more.",
    'Commands that talk to a running daemon find it by --url, else $ORGANISM_URL, else the address it',
    "wrote into its data_dir, else organism.yaml's server section; the API token is $ORGANISM_TOKEN",
    '(both also read from the .env beside organism.yaml). Exit codes: 0 done, 1 error, 2 usage (operator',
    "commands) or refused (tools call), 141 the output's reader went away; send documents its own.",
    '',
    'Docs: node_modules/organism/docs/README.md (in your project), starting with docs/guide/project.md.',
  );
  return lines.join('\n');
}
