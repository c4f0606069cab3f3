/**
 * BaseX's error text as librarian.query: "Stopped at <file>, <line>/<column>:\n[<code>] <message>".
 * The position is kept only for the parse step, where it is the position in the agent's query; an
 * error raised while the query runs inside xquery:eval is reported by BaseX at the outer query.
 */
import { LibrarianError } from '../../src/errors.ts';

const POSITION = /^Stopped at [^\n]*?, (\d+)\/(\d+):\s*/;
const CODE = /^\[(?:[a-z]+:)?([A-Za-z][\w-]*)\]\s*/;

export function basexQueryError(raw: string, withPosition: boolean): LibrarianError {
  let text = raw.trim();
  const at = POSITION.exec(text);
  if (at) text = text.slice(at[0].length);
  const code = CODE.exec(text);
  const reason = text.trim();
  const position = at && withPosition ? { line: Number(at[1]), column: Number(at[2]) } : undefined;
  const where = position ? ` at line ${position.line}, column ${position.column}` : '';
  return new LibrarianError('librarian.query', `XQuery error${where} (BaseX answered): ${reason}`, {
    ...(code && /^[A-Z]{4}\d{4}$/.test(code[1]!) ? { xquery_code: code[1] } : {}),
    ...(position ?? {}),
  });
}
