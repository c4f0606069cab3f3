/**
 * Every command's --help is a page a user can act on: its usage line, what it does, and an example
 * to copy; `organism --help` ends by pointing to the docs. In process (main() as bin/organism.js
 * calls it) for each command, and once through the real CLI.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { captureIo } from '../../src/cli/io.ts';
import { COMMAND_NAMES, main } from '../../src/cli/main.ts';

const BIN = fileURLToPath(new URL('../../bin/organism.js', import.meta.url));

async function help(argv: string[]): Promise<{ code: number; text: string }> {
  const io = captureIo();
  const code = await main([...argv, '--help'], io);
  return { code, text: io.stdout.join('\n') };
}

describe('organism <command> --help', () => {
  const pages = [...COMMAND_NAMES.map((name) => [name]), ['mcp', 'login']];

  it.each(pages.map((argv) => [argv.join(' '), argv]))(
    '%s: usage, description and an example',
    async (name, argv) => {
      const { code, text } = await help(argv as string[]);
      expect(code).toBe(0);
      expect(text.split('\n')[0]).toMatch(new RegExp(`^usage: organism ${name}\\b`));
      // The description: a paragraph after the usage lines.
      expect(text.split('\n\n').length).toBeGreaterThanOrEqual(3);
      const examples = text.slice(text.indexOf('\nexamples:\n'));
      expect(text, 'an examples: section').toContain('\nexamples:\n');
      expect(examples).toMatch(new RegExp(`\\n  (npx )?organism ${name}\\b`));
    },
  );

  it('commands with flags list them under options:', async () => {
    for (const argv of pages) {
      const { text } = await help(argv);
      if (argv[0] === 'guard') continue; // its only input is stdin, described field by field
      expect(text, argv.join(' ')).toMatch(/\noptions:\n|\n {2}--[a-z]/);
      expect(text, argv.join(' ')).toContain('--help');
    }
  });

  it('organism --help (the real CLI) lists every command and ends pointing to the docs', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [BIN, '--help']);
    for (const name of COMMAND_NAMES) expect(stdout).toContain(`\n  ${name.padEnd(10)} `);
    const last = stdout.trimEnd().split('\n').at(-1)!;
    expect(last).toMatch(/^Docs: /);
    expect(last).toContain('node_modules/organism/docs/README.md');
    expect(last).toContain('docs/guide/project.md');
  });
});
