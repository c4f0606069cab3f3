/**
 * The `count` clause (XQuery 3.1 3.12.10), which fontoxpath cannot parse. In the text, each
 * `count $n` becomes a clause it parses and this module recognises in the parse,
 * `let $n := Q{urn:organism:count}n()`; then each such FLWOR
 *
 *   PRE count $n POST
 *
 * is rewritten into
 *
 *   for $t at $n in (PRE return [$v1, $v2 ...]) let $v1 := $t(1) let $v2 := $t(2) ... POST
 *
 * Why it means the same: the count clause binds $n to each tuple's position in the tuple stream as
 * PRE leaves it (after its where and order by), and keeps the tuples and their variables as they
 * are; the inner FLWOR returns one array per tuple, in that order, holding each variable's value
 * (a sequence, kept whole as an array member), `at` numbers them, and the lets bind the variables
 * again (a variable named as the count variable is not bound again: the count clause hides it).
 *
 * The substitution is checked: the parse must hold exactly one marker clause per substitution,
 * each a clause of a FLWOR after its first (so none landed in text or a string); the rewrite is
 * proved as group by's is (graft.ts): the rewritten text must parse to the substituted parse with
 * the FLWOR replaced by the template holding the original's parsed clauses.
 */
import type { Element } from 'slimdom';
import { LibrarianError } from '../../src/errors.ts';
import {
  boundVariables,
  flworSpan,
  flwors,
  graftClauses,
  innermost,
  provedRewrite,
  varName,
} from './flwor.ts';
import { bodyExpression, childNamed, hole, holes } from './graft.ts';
import { masked } from './query-text.ts';
import { refuse } from './unsupported.ts';

const MARK_URI = 'urn:organism:count';
const MAX_CLAUSES = 16;
const NAME = String.raw`\$[\w.-]+(?::[\w.-]+)?`;

function reject(reason: string): LibrarianError {
  return refuse('count clause', reason);
}

/** The query with each `count $n` clause as its marker let clause (or `marker`), and how many there were. */
export function substituteCountClauses(
  query: string,
  marker = (name: string) => `let ${name} := Q{${MARK_URI}}n()`,
): { text: string; count: number } {
  const code = masked(query);
  if (!/\bcount\s+\$/.test(code) || query.includes(MARK_URI)) return { text: query, count: 0 };
  let text = '';
  let last = 0;
  let count = 0;
  for (const m of code.matchAll(new RegExp(String.raw`(?<![\w$:.-])count\s+(${NAME})`, 'g'))) {
    text += `${query.slice(last, m.index)}${marker(m[1]!)}`;
    last = m.index + m[0].length;
    count++;
  }
  return { text: text + query.slice(last), count };
}

/** A marker clause: `let $n := Q{urn:organism:count}n()` as fontoxpath parses it. */
function isMarker(clause: Element): boolean {
  if (clause.localName !== 'letClause' || clause.children.length !== 1) return false;
  const call = childNamed(clause.children[0]!, 'letExpr')?.children[0];
  const name = call?.localName === 'functionCallExpr' ? childNamed(call, 'functionName') : undefined;
  const uri = name?.getAttributeNS(name.namespaceURI, 'URI') ?? name?.getAttribute('URI');
  return uri === MARK_URI;
}

/** How many marker calls the parse holds (fewer than substituted: one landed in a string or text). */
export function markerCalls(ast: Element): number {
  let n = 0;
  for (const name of ast.getElementsByTagNameNS(ast.namespaceURI, 'functionName')) {
    if ((name.getAttributeNS(name.namespaceURI, 'URI') ?? name.getAttribute('URI')) === MARK_URI) n++;
  }
  return n;
}

function template(id: number, pre: string, countVar: string, carried: string[], post: string): string {
  const t = `$organism_c${id}t_`;
  return (
    `for ${t} at ${countVar} in (${pre} return [${carried.join(', ')}]) ` +
    carried.map((v, i) => `let ${v} := ${t}(${i + 1}) `).join('') +
    post
  );
}

function rewriteOne(query: string, ast: Element, index: number, parse: (q: string) => Element): string {
  const flwor = flwors(ast)[index]!;
  const clauses = [...flwor.children];
  const at = clauses.findIndex(isMarker);
  if (at === 0) {
    throw new LibrarianError(
      'librarian.query',
      'XQuery error: XPST0003: a FLWOR cannot begin with a count clause',
      {
        xquery_code: 'XPST0003',
      },
    );
  }
  const item = clauses[at]!.children[0]!;
  const countVar = varName(childNamed(childNamed(item, 'typedVariableBinding')!, 'varName'), reject);
  // The variables of an earlier rewrite's own clauses are not used after them.
  const carried = boundVariables(clauses.slice(0, at), reject).filter(
    (v) => v !== countVar && !/^\$organism_[gc]\d+[a-z]_$/.test(v),
  );
  let id = 0;
  while (query.includes(`organism_c${id}`)) id++;
  const { start, end } = flworSpan(query, index, reject);
  const code = masked(query).slice(0, end);
  const mark = new RegExp(String.raw`let\s+${NAME}\s*:=\s*Q\{${MARK_URI}\}n\(\)`, 'g');
  mark.lastIndex = start;
  const m = mark.exec(code);
  if (!m) throw reject('the clause could not be read');
  const rewritten =
    query.slice(0, start) +
    template(id, query.slice(start, m.index), countVar, carried, query.slice(m.index + m[0].length, end)) +
    query.slice(end);

  const holed = bodyExpression(
    parse(
      template(
        id,
        `for $organism_gh_ in ${hole('pre')}`,
        countVar,
        carried,
        ` where ${hole('post')} return ()`,
      ),
    ),
  );
  graftClauses(holed, holes(holed), clauses.slice(0, at), clauses.slice(at + 1), reject);
  return provedRewrite(ast, index, holed, rewritten, parse, reject);
}

/**
 * The query (its count clauses substituted, `expected` of them) with each rewritten, innermost
 * first. Throws librarian.unsupported naming the count clause when one cannot be proved.
 */
export function rewriteCount(
  query: string,
  ast: Element,
  parse: (q: string) => Element,
  expected: number,
): string {
  let markers = 0;
  for (const f of flwors(ast)) markers += f.children.filter(isMarker).length;
  if (markers !== expected || markerCalls(ast) !== expected) throw reject('the clause could not be read');
  let text = query;
  let current = ast;
  for (let n = 0; n < Math.min(expected, MAX_CLAUSES); n++) {
    const index = innermost(current, isMarker);
    if (index < 0) break;
    text = rewriteOne(text, current, index, parse);
    current = parse(text);
  }
  if (markerCalls(current) !== 0) throw reject('too many count clauses');
  return text;
}
