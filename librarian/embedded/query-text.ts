/**
 * Reading a query's text without parsing it: where its code is (comments and string contents
 * masked, offsets kept) and where its prolog ends, for the rewrites that wrap or edit a query.
 */

/**
 * The query with comments blanked and string literals' contents made 'x' (not spaces, so a
 * string at the end of an expression is not read as whitespace); the same length as the query.
 */
export function masked(query: string): string {
  let out = '';
  let depth = 0;
  let quote: string | null = null;
  for (let i = 0; i < query.length; i++) {
    const c = query[i]!;
    const next = query[i + 1];
    if (quote) {
      if (c === quote && next === quote) {
        i++;
        out += 'xx';
      } else if (c === quote) {
        quote = null;
        out += c;
      } else out += 'x';
    } else if (c === '(' && next === ':') {
      depth++;
      i++;
      out += '  ';
    } else if (depth > 0) {
      if (c === ':' && next === ')') {
        depth--;
        i++;
        out += '  ';
      } else out += ' ';
    } else {
      if (c === '"' || c === "'") quote = c;
      out += c;
    }
  }
  return out;
}

/**
 * The prolog (up to its last ';') and the body; a query not opening with a declaration has no
 * prolog. Null when they cannot be told apart by the text (a ';' of an entity in element content).
 */
export function queryParts(query: string): { prolog: string; body: string } | null {
  const code = masked(query);
  if (!/^\s*(?:xquery\s+version|declare|import)\b/.test(code)) return { prolog: '', body: query };
  const end = code.lastIndexOf(';');
  if (end < 0) return null;
  if (/[<>]/.test(code.slice(0, end)) && /&\w+;|&#x?[0-9a-fA-F]+;/.test(code.slice(0, end + 1))) return null;
  return { prolog: query.slice(0, end + 1), body: query.slice(end + 1) };
}
