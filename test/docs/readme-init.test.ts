/**
 * The README's five-minute path shows the project `organism init` writes: its listener, tool and
 * test are the templates' files (comments on lines of their own aside: the README leaves most out,
 * for length), and its organism.yaml is the template's, key for key. A change to either that the
 * other does not follow fails here, so the README cannot show a project init no longer makes.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { HELLO_LISTENER, HELLO_TEST, ORGANISM_YAML, WORD_COUNT_TOOL } from '../../src/cli/init/templates.ts';
import { parsePage, REPO_ROOT } from '../helpers/doctest/parse.ts';

const blocks = parsePage(await readFile(join(REPO_ROOT, 'README.md'), 'utf8'), 'README.md');

/** The code as a reader compares it: without comments on lines of their own and runs of blank lines. */
function code(text: string): string {
  return text
    .replace(/^[ \t]*\/\*\*[\s\S]*?\*\/\n/gm, '')
    .replace(/^[ \t]*\/\/.*\n/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function fileBlock(path: string): string {
  const block = blocks.find((b) => b.kind === 'file' && b.path === path);
  if (!block) throw new Error(`README.md has no <!-- file: ${path} --> block`);
  return block.code;
}

describe('README: the project organism init writes', () => {
  it.each([
    ['listeners/hello.ts', HELLO_LISTENER],
    ['tools/word-count.ts', WORD_COUNT_TOOL],
    ['test/hello.test.ts', HELLO_TEST],
  ])('%s is the file init writes', (path, template) => {
    expect(code(fileBlock(path))).toBe(code(template));
  });

  it("organism.yaml is init's, key for key (for a project in my-organism/)", () => {
    const shown = blocks.find((b) => b.kind === 'yaml' && /^organism:/m.test(b.code));
    expect(shown, 'README.md shows no organism.yaml').toBeDefined();
    expect(parse(shown!.code)).toEqual(parse(ORGANISM_YAML({ name: 'my-organism' })));
  });
});
