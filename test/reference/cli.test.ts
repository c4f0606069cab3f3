/** docs/reference/cli.md is what the CLI's --help prints, for every command. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMMAND_NAMES } from '../../src/cli/main.ts';
import { renderCliReference } from '../../src/reference/cli.ts';
import { referencePath } from '../../src/reference/files.ts';

describe('docs/reference/cli.md', () => {
  it("is exactly what the commands' --help print (run npx tsx src/reference/update.ts)", async () => {
    expect(readFileSync(referencePath('cli.md'), 'utf8')).toBe(await renderCliReference());
  });

  it('has a section for every command, in the order organism --help lists them', async () => {
    const page = await renderCliReference();
    const headings = [...page.matchAll(/^## organism ?(\w*)$/gm)].map((m) => m[1]);
    expect(headings).toEqual(['', ...COMMAND_NAMES]);
    expect(page).toContain('## organism mcp login\n');
    expect(page).toContain('usage: organism send [--to LISTENER]');
  });
});
