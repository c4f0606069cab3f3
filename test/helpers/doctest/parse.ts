/**
 * A Markdown page's fenced blocks, as the doc-test runner reads them, and the line of the page
 * each starts on, so a failure names the page and the line. The conventions a page is written to:
 *
 * - ```sh runs (in order, in the project's root, against the page's daemon) and must exit 0; a
 *   transcript (`$ command` lines followed by their output) runs its `$` lines only. Each block is
 *   a shell of its own (bash -e -o pipefail): a variable or a cd does not carry over to the next.
 *   The daemon's address is in .organism/daemon.json, its local token in .organism/api-token.
 * - `<!-- file: relative/path -->` on the line before a block: the block is written there.
 * - ```ts with no marker is type-checked in the project (a complete module with its imports).
 * - ```yaml whose first key is a top-level key of organism.yaml is validated against the schema.
 * - `<!-- readme-example: test/x.test.ts -->` before a ```ts block: a test file, written and run.
 * - `norun` after the language (```sh norun) shows a block without running it; any other language
 *   (text, console, json, xml...) is shown only.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { organismSchema } from '../../../src/config/schema.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export type BlockKind =
  /** ```sh: run in the project, must exit 0. */
  | 'sh'
  /** `<!-- file: path -->` before the block: written to that path in the project. */
  | 'file'
  /** ```ts with no marker: type-checked in the project. */
  | 'ts'
  /** ```yaml whose first key is an organism.yaml top-level key: validated against the schema. */
  | 'yaml'
  /** `<!-- readme-example: test/x.test.ts -->` before a ```ts block: written there and run. */
  | 'test'
  /** Shown, not run: other languages, `norun`, yaml that is not organism.yaml. */
  | 'shown';

export interface DocBlock {
  /** The page as given to parsePage (a path relative to the checkout, for messages). */
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The info string's first word (`sh`, `ts`, `yaml`...), lower case. */
  lang: string;
  /** The info string's other words (`norun`). */
  flags: string[];
  kind: BlockKind;
  /** The block's text, without its fences and the indentation of its opening fence. */
  code: string;
  /** For `file` and `test`: the path in the project the marker names. */
  path?: string;
}

const SHELL = new Set(['sh', 'bash', 'shell']);
const TYPESCRIPT = new Set(['ts', 'typescript']);
const YAML = new Set(['yaml', 'yml']);
const TOP_LEVEL_KEYS = new Set(Object.keys((organismSchema as { properties: object }).properties));

const OPEN = /^( {0,3}|\s*)(`{3,}|~{3,})\s*([^`]*)$/;
const FILE_MARKER = /^\s*<!--\s*file:\s*(\S+)\s*-->\s*$/;
const EXAMPLE_MARKER = /^\s*<!--\s*readme-example:\s*(\S+)\s*-->\s*$/;

/** Every fenced block of `text` (the page `page`), in order. Fences inside a longer fence are text. */
export function parsePage(text: string, page: string): DocBlock[] {
  const lines = text.split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = OPEN.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, info] = open as unknown as [string, string, string, string];
    const close = new RegExp(`^\\s*${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    let end = i + 1;
    while (end < lines.length && !close.test(lines[end]!)) end++;
    const body = lines
      .slice(i + 1, end)
      .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart()));
    const [lang = '', ...flags] = info.trim().toLowerCase().split(/\s+/).filter(Boolean);
    const marker = markerBefore(lines, i);
    const code = body.join('\n');
    blocks.push({ page, line: i + 1, lang, flags, code, ...classify(lang, flags, code, marker) });
    i = end;
  }
  return blocks;
}

/** The marker comment on the last non-blank line before line `at`, if any. */
function markerBefore(lines: string[], at: number): { file?: string; example?: string } {
  for (let i = at - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    const file = FILE_MARKER.exec(line)?.[1];
    if (file) return { file };
    const example = EXAMPLE_MARKER.exec(line)?.[1];
    if (example) return { example };
    return {};
  }
  return {};
}

function classify(
  lang: string,
  flags: string[],
  code: string,
  marker: { file?: string; example?: string },
): { kind: BlockKind; path?: string } {
  if (flags.includes('norun')) return { kind: 'shown' };
  if (marker.example) return { kind: 'test', path: marker.example };
  if (marker.file) return { kind: 'file', path: marker.file };
  if (SHELL.has(lang)) return { kind: 'sh' };
  if (TYPESCRIPT.has(lang)) return { kind: 'ts' };
  if (YAML.has(lang)) {
    const first = /^([A-Za-z_][\w-]*)\s*:/m.exec(code.replace(/^\s*#.*$/gm, ''))?.[1];
    if (first && TOP_LEVEL_KEYS.has(first)) return { kind: 'yaml' };
  }
  return { kind: 'shown' };
}

/**
 * The commands of a ```sh block. A block written as a transcript (`$ command` lines followed by
 * what they print) runs its `$` lines only, with their `\` continuations; any other block runs whole.
 */
export function shellScript(code: string): string {
  const lines = code.split('\n');
  if (!lines.some((l) => /^\$ /.test(l))) return code;
  const commands: string[] = [];
  let continued = false;
  for (const line of lines) {
    if (continued || /^\$ /.test(line)) {
      commands.push(continued ? line : line.slice(2));
      continued = /\\$/.test(line);
    }
  }
  return commands.join('\n');
}

/** The pages the doc-test runs, relative to the checkout: README.md, then docs/guide/*.md. */
export async function docPages(): Promise<string[]> {
  const { readdir } = await import('node:fs/promises');
  const guide = await readdir(join(REPO_ROOT, 'docs/guide')).catch(() => [] as string[]);
  return [
    'README.md',
    ...guide
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `docs/guide/${f}`),
  ];
}

/** The page `page` (relative to the checkout) parsed. */
export async function readPage(page: string, root = REPO_ROOT): Promise<DocBlock[]> {
  return parsePage(await readFile(join(root, page), 'utf8'), page);
}

/**
 * The test files the docs mark with `<!-- readme-example: test/x.test.ts -->`, from every page the
 * doc-test runs (docs/guide/testing.md has them since the guide was split from the README).
 */
export async function markedExamples(): Promise<Array<{ file: string; code: string; page: string }>> {
  const examples = [];
  for (const page of await docPages()) {
    for (const block of await readPage(page)) {
      if (block.kind === 'test') examples.push({ file: block.path!, code: `${block.code}\n`, page });
    }
  }
  return examples;
}
