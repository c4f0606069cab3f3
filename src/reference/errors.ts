/**
 * docs/reference/errors.md: every error class of src/errors.ts with its codes and its doc comment,
 * and the HTTP API's `error.code`s with their status (src/server/openapi/error-codes.ts). The classes
 * are read from the source text, since their doc comments exist nowhere else; the staleness test
 * also checks that the classes read here are exactly the module's exported error classes.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { httpErrorCodes } from '../server/openapi/error-codes.ts';
import { UPDATE_COMMAND } from './files.ts';

export const ERRORS_SOURCE = fileURLToPath(new URL('../errors.ts', import.meta.url));

export interface ErrorClassDoc {
  name: string;
  codes: string[];
  doc: string;
}

const CODE = /^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/;

/** The exported classes of errors.ts, in source order, with their codes and doc comments. */
export function readErrorClasses(source = readFileSync(ERRORS_SOURCE, 'utf8')): ErrorClassDoc[] {
  // Unions of code literals (`export type KvErrorCode = | 'kv.a' | 'kv.b';`), members possibly
  // with doc comments of their own.
  const unions = new Map<string, string[]>();
  for (const m of source.matchAll(/export type (\w+) =([^;]*);/g)) {
    const body = uncommented(m[2]!);
    if (/^\s*(\|\s*'[^']+'\s*)+$/.test(body))
      unions.set(
        m[1]!,
        [...body.matchAll(/'([^']+)'/g)].map((c) => c[1]!),
      );
  }
  const out: ErrorClassDoc[] = [];
  for (const m of source.matchAll(/(?:\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*)?export class (\w+)/g)) {
    // The class's text runs to the next top-level export: its extends clause and its body.
    const from = m.index! + m[0].length;
    const next = source.indexOf('\nexport ', from);
    const text = uncommented(source.slice(from, next < 0 ? undefined : next));
    const codes = new Set<string>();
    for (const literal of text.matchAll(/'([^'\s]+)'/g)) if (CODE.test(literal[1]!)) codes.add(literal[1]!);
    for (const ref of text.matchAll(/OrganismError<(\w+)>/g))
      for (const c of unions.get(ref[1]!) ?? []) codes.add(c);
    out.push({ name: m[2]!, codes: [...codes], doc: docText(m[1] ?? '') });
  }
  return out;
}

/** `text` without its comments, whose examples may name codes that are not the class's own. */
function uncommented(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

/** A doc comment's text as one paragraph per blank-line-separated block. */
function docText(comment: string): string {
  const lines = comment.split('\n').map((line) => line.replace(/^\s*\*\s?/, '').trimEnd());
  return lines
    .join('\n')
    .trim()
    .split(/\n\s*\n/)
    .map((para) => para.replace(/\s*\n\s*/g, ' '))
    .join('\n\n');
}

const BASE_DOC =
  'The base of every class here. Throw it with a code of your own from a tool or listener, or extend it; `details` carries structured data safe to show a caller (never secrets).';

export function renderErrorsReference(classes = readErrorClasses()): string {
  const out = [
    '# Error codes',
    '',
    '<!-- Generated from src/errors.ts and src/server/openapi/error-codes.ts by renderErrorsReference',
    `     (src/reference/errors.ts). Edit those, then run: ${UPDATE_COMMAND} -->`,
    '',
    'Every failure Organism reports is an `OrganismError` with a stable, dotted `code`',
    '(`<area>.<what>`): the same failure gives the same code from the CLI, the HTTP API',
    "(`error.code`), a thread's `<SystemError><code>` and a tool result (a tool that throws an",
    '`OrganismError` keeps its code). Match on the code, never on the message. Your own tools and',
    "listeners may throw `new OrganismError('mytool.quota', '...')` (`import { OrganismError } from",
    "'organism'`) or extend it; the code reaches the caller unchanged.",
    '',
    "The codes the tool runtime itself writes into a tool result's `error.code` (`PermissionDenied`,",
    '`GuardDenied`, ...) are in [tool-results.md](tool-results.md).',
    '',
    '## Codes',
    '',
    '| code | class |',
    '| --- | --- |',
  ];
  const rows = classes.flatMap((c) => c.codes.map((code) => ({ code, name: c.name })));
  rows.sort((a, b) => a.code.localeCompare(b.code));
  for (const row of rows) out.push(`| \`${row.code}\` | [\`${row.name}\`](#${row.name.toLowerCase()}) |`);
  out.push('', '## Classes', '', 'Each class, its codes, and when it happens.');
  for (const c of classes) {
    out.push('', `### ${c.name}`, '');
    if (c.codes.length > 0) out.push(`Codes: ${c.codes.map((code) => `\`${code}\``).join(', ')}.`, '');
    else out.push('Codes: any, given by whoever throws it.', '');
    out.push(c.doc || (c.name === 'OrganismError' ? BASE_DOC : '(no description)'));
  }
  out.push(
    '',
    '## HTTP API answers',
    '',
    'A refused request answers `{"error": {"code", "message", ...}}` with one of these statuses',
    '(the [HTTP API reference](http-api.md) gives each route its own).',
    '',
    '| status | code | when |',
    '| --- | --- | --- |',
  );
  for (const e of httpErrorCodes())
    out.push(`| ${e.status} | \`${e.code}\` | ${e.when.replace(/\|/g, '\\|')} |`);
  return `${out.join('\n')}\n`;
}
