/** Reading organism.yaml from disk and parsing it into a YAML document that keeps positions. */
import { readFile } from 'node:fs/promises';
import { LineCounter, parseDocument } from 'yaml';
import type { ConfigIssue } from '../errors.ts';
import { ConfigSource } from './source.ts';

/** Aliases expanded per document; bounds "billion laughs" style alias bombs. */
const MAX_ALIAS_COUNT = 100;

export type ReadResult = { source: ConfigSource; issues: [] } | { source: undefined; issues: ConfigIssue[] };

/** Reads `absPath`; on failure returns the issue instead of throwing so the caller can collect all of them. */
export async function readConfigText(absPath: string, shownAs: string): Promise<string | ConfigIssue> {
  try {
    return await readFile(absPath, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'is a folder, not a file'
          : code === 'EACCES'
            ? 'permission denied'
            : (error as Error).message;
    return { file: shownAs, path: '', message: `cannot read config file: ${reason}` };
  }
}

/**
 * Parses YAML text. Syntax errors come back as issues with the line and column the parser gave;
 * the document is only returned when it parsed cleanly (a half-parsed file would give misleading
 * follow-up errors).
 */
export function parseConfigText(text: string, shownAs: string): ReadResult {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length === 0) {
    return { source: new ConfigSource(shownAs, text, doc, lines), issues: [] };
  }
  const issues = doc.errors.map((error): ConfigIssue => {
    const { line, col } = lines.linePos(error.pos[0]);
    return {
      file: shownAs,
      line,
      column: col,
      path: '',
      message: `YAML syntax error: ${firstLine(error.message)}`,
    };
  });
  return { source: undefined, issues };
}

/** The plain JavaScript value of the document, aliases expanded within a bound. */
export function toPlain(source: ConfigSource): unknown {
  return source.doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
}

function firstLine(message: string): string {
  return message.split('\n')[0]!.trim();
}
