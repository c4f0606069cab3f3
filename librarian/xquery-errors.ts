/**
 * XQuery errors from either engine as one LibrarianError shape: code `librarian.query`, a message
 * that keeps the engine's own words, and `details.line` / `details.column` when the engine said
 * where (fontoxpath for parse errors; eXist as "[at line N, column M]").
 */
import { LibrarianError, OrganismError } from '../src/errors.ts';

const FONTOX_POSITION = /at <>:(\d+):(\d+)/;
const FONTOX_RANGE = /at <>:(\d+):(\d+) - (\d+):(\d+)/;
const EXIST_POSITION = /\[at line (\d+), column (\d+)/;
const ERROR_CODE = /^(?:err:)?([A-Z]{4}\d{4})\b/;
const MAX_EXPECTED = 160;

function position(message: string, pattern: RegExp): { line: number; column: number } | undefined {
  const m = pattern.exec(message);
  return m ? { line: Number(m[1]), column: Number(m[2]) } : undefined;
}

/** fontoxpath's message without its code frame, and without a page of expected tokens. */
function fontoxpathReason(raw: string): string {
  const lines = raw.split('\n');
  // An error thrown inside a custom function (collection(), doc()) comes wrapped: its own message
  // is the second line.
  if (lines[0]?.startsWith('Custom XPath function ') && lines[1]) return lines[1].trim();
  const errorLine = lines.find((l) => l.startsWith('Error: '));
  let reason = (errorLine ? errorLine.slice('Error: '.length) : (lines[0] ?? raw)).trim();
  const expected = reason.indexOf('Expected ');
  if (expected >= 0 && reason.length - expected > MAX_EXPECTED)
    reason = `${reason.slice(0, expected)}Unexpected token.`;
  return reason;
}

/** A fontoxpath parse or evaluation error as librarian.query. */
export function xqueryError(error: unknown, context = 'the query failed'): OrganismError {
  if (error instanceof OrganismError) return error;
  const raw = error instanceof Error ? error.message : String(error);
  const reason = fontoxpathReason(raw);
  const at = position(raw, FONTOX_POSITION);
  const code = ERROR_CODE.exec(reason)?.[1];
  const where = at ? ` at line ${at.line}, column ${at.column}` : '';
  return new LibrarianError('librarian.query', `XQuery error${where} (${context}): ${reason}`, {
    ...(code ? { xquery_code: code } : {}),
    ...(at ?? {}),
  });
}

/** eXist's `<exception><message>` text as librarian.query, line and column taken from the message. */
export function existQueryError(message: string, status: number): LibrarianError {
  const at = position(message, EXIST_POSITION);
  const code = ERROR_CODE.exec(message.trim())?.[1];
  const where = at ? ` at line ${at.line}, column ${at.column}` : '';
  return new LibrarianError(
    'librarian.query',
    `XQuery error${where} (eXist-db answered ${status}): ${message.trim()}`,
    {
      ...(code ? { xquery_code: code } : {}),
      ...(at ?? {}),
      status,
    },
  );
}

/** The text of `query` at line/column (1-based), to the end of its word or the next 20 characters. */
function tokenAt(
  query: string,
  line: number,
  column: number,
  end?: { line: number; column: number },
): string {
  const lines = query.split('\n');
  const from = lines[line - 1]?.slice(column - 1) ?? '';
  if (end && end.line === line && end.column > column) return from.slice(0, end.column - column).trim();
  const word = /^\s*(\S[^\s(){}[\],;]*|\S)/.exec(from);
  return (word?.[1] ?? '').slice(0, 20);
}

/**
 * A fontoxpath parse error as what an agent can act on: "XQuery error at line L, column C (syntax
 * error at "<token>"): <reason>". Other errors go through xqueryError.
 */
export function syntaxError(error: unknown, query: string): OrganismError {
  if (error instanceof OrganismError) return error;
  const raw = error instanceof Error ? error.message : String(error);
  const at = position(raw, FONTOX_POSITION);
  if (!at || !/XPST0003/.test(raw)) return xqueryError(error);
  const range = FONTOX_RANGE.exec(raw);
  const end = range ? { line: Number(range[3]), column: Number(range[4]) } : undefined;
  const token = tokenAt(query, at.line, at.column, end);
  const shown = token === '' ? 'the end of the query' : `"${token}"`;
  return new LibrarianError(
    'librarian.query',
    `XQuery error at line ${at.line}, column ${at.column} (syntax error at ${shown}): ${fontoxpathReason(raw)}`,
    { xquery_code: 'XPST0003', ...at, token },
  );
}
