/**
 * docs/reference/cli.md: `organism --help` and every command's `--help`, as the CLI prints them (the
 * same main() bin/organism.js runs), so the page cannot say what the CLI does not.
 */
import { homedir } from 'node:os';
import { defaultAuditKeyFile } from '../audit/key.ts';
import { captureIo } from '../cli/io.ts';
import { COMMAND_NAMES, main } from '../cli/main.ts';
import { UPDATE_COMMAND } from './files.ts';

/** Pages of a command's own subcommands that have a help of their own. */
const SUBCOMMANDS: readonly string[][] = [['mcp', 'login']];

async function helpText(argv: string[]): Promise<string> {
  const io = captureIo();
  const code = await main([...argv, '--help'], io);
  if (code !== 0)
    throw new Error(`organism ${argv.join(' ')} --help exited ${code}: ${io.stderr.join('\n')}`);
  // Defaults under the home folder are shown as ~, so the page does not depend on who generates it.
  return io.stdout
    .join('\n')
    .replaceAll(defaultAuditKeyFile(), '~/.config/organism/audit.key')
    .replaceAll(homedir(), '~')
    .trimEnd();
}

export async function renderCliReference(): Promise<string> {
  const out = [
    '# CLI reference',
    '',
    "<!-- Generated from each command's --help by renderCliReference (src/reference/cli.ts).",
    `     Edit the command's help text, then run: ${UPDATE_COMMAND} -->`,
    '',
    'What `organism --help` and `organism <command> --help` print. In a project, run the CLI with',
    '`npx organism` (or through the scripts `organism init` writes: `npm start`, `npm run dev`).',
    '',
    '## organism',
    '',
    '```text',
    await helpText([]),
    '```',
  ];
  const pages = [...COMMAND_NAMES.map((name) => [name]), ...SUBCOMMANDS].sort((a, b) =>
    a.join(' ') === b.join(' ')
      ? 0
      : COMMAND_NAMES.indexOf(a[0]!) - COMMAND_NAMES.indexOf(b[0]!) || a.length - b.length,
  );
  for (const argv of pages)
    out.push('', `## organism ${argv.join(' ')}`, '', '```text', await helpText(argv), '```');
  return `${out.join('\n')}\n`;
}
